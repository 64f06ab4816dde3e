"""Reading and writing the JSON files under `$INVINCAT_HOME` that grant permissions and
that Invincat itself changes: `approvals.json` ('always allow' rules, `approvals.py`) and
`trusted_projects.json` (trusted project MCP configs, `extensions/mcp/trust.py`).

Both are `{"version": 1, TABLE: {...}}` documents, changed read-modify-write under their
cross-process lock (`file_lock`); what to do with a damaged one is the caller's choice.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from invincat_server.runtime import private_files
from invincat_server.runtime.policy import sanctioned


def load(path: Path, table: str, *, on_damaged: Callable[[], None] | None = None) -> dict[str, Any]:
    """The document at `path`; an empty one (`{"version": 1, table: {}}`) when the file is
    missing, of another shape, or damaged (unreadable, not JSON), after `on_damaged()` ran
    for a damaged one (say, to keep a copy for the user)."""
    empty: dict[str, Any] = {"version": 1, table: {}}
    target = _target(path)
    try:
        raw = private_files.read_bytes(target, root=target.parent)
    except private_files.UnsafePathError:
        return empty  # a FIFO or other special file: grants nothing, and is left as it is
    except OSError:
        raw = b""  # there (a missing file reads as None) but unreadable: damaged
    if raw is None:
        return empty
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        if on_damaged is not None:
            on_damaged()
        return empty
    if not isinstance(data, dict) or not isinstance(data.get(table), dict):
        return empty
    return data


def save(path: Path, data: dict[str, Any], *, temp_prefix: str = "") -> None:
    """Replace the file with `data` atomically (a reader never sees half of it) and record
    the write as Invincat's own, so the settings tamper watch does not undo it. Call it
    under the file's lock, with what was loaded under that same lock. (`temp_prefix` is
    no longer used: private_files names the temp file after the target.)"""
    before = read_bytes(path)
    after = json.dumps(data, indent=2).encode("utf-8")
    # 0600 (rules are the user's business alone), a temp file next to it, renamed over it.
    target = _target(path)
    private_files.atomic_write(target, after, root=target.parent, durable=False)
    sanctioned.record(path, before, after)


def _target(path: Path) -> Path:
    """The file itself: a link the user made in their own `$INVINCAT_HOME` (a dotfiles
    checkout) is theirs to keep, so it is written through, as the settings watch restores
    through it (settings_watch.py). Nothing else can plant one: the home is 0700 and the
    agent's tools never write there."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it cannot be read (missing)."""
    try:
        return path.read_bytes()
    except OSError:
        return None
