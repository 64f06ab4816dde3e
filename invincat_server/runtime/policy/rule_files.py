"""Reading and writing the JSON files under `$INVINCAT_HOME` that grant permissions and
that Invincat itself changes: `approvals.json` ('always allow' rules, `approvals.py`) and
`trusted_projects.json` (trusted project MCP configs, `extensions/mcp/trust.py`).

Both are `{"version": 1, TABLE: {...}}` documents, changed read-modify-write under their
cross-process lock (`file_lock`); what to do with a damaged one is the caller's choice.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from invincat_server.runtime.policy import sanctioned


def load(path: Path, table: str, *, on_damaged: Callable[[], None] | None = None) -> dict[str, Any]:
    """The document at `path`; an empty one (`{"version": 1, table: {}}`) when the file is
    missing, of another shape, or damaged (unreadable, not JSON), after `on_damaged()` ran
    for a damaged one (say, to keep a copy for the user)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"version": 1, table: {}}
    except (OSError, json.JSONDecodeError):
        if on_damaged is not None:
            on_damaged()
        return {"version": 1, table: {}}
    if not isinstance(data, dict) or not isinstance(data.get(table), dict):
        return {"version": 1, table: {}}
    return data


def save(path: Path, data: dict[str, Any], *, temp_prefix: str) -> None:
    """Replace the file with `data` atomically (a reader never sees half of it) and record
    the write as Invincat's own, so the settings tamper watch does not undo it. Call it
    under the file's lock, with what was loaded under that same lock."""
    before = read_bytes(path)
    after = json.dumps(data, indent=2).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix, suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(after)
    os.replace(tmp, path)
    sanctioned.record(path, before, after)


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it cannot be read (missing)."""
    try:
        return path.read_bytes()
    except OSError:
        return None
