"""Trust for project-level MCP configs.

A project's `.mcp.json` can name any program to run, so it is executed only after the user
trusted exactly this content: the sha256 fingerprint of the project's MCP config files is
stored in `$INVINCAT_HOME/trusted_projects.json` (outside the project, so neither the
repository nor the agent can trust itself). Any change to the files changes the
fingerprint and asks again.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from invincat_server.runtime.policy import file_lock, rule_files

TRUST_FILE = "trusted_projects.json"


def fingerprint(root: Path, files: list[Path]) -> str:
    """sha256 over each file's project-relative path and bytes, in a fixed order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        try:
            content = path.read_bytes()
        except OSError:
            content = b""
        # Length-prefixed fields: no two different file sets can hash the same input.
        for part in (rel.encode(), content):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return "sha256:" + digest.hexdigest()


class TrustStore:
    """`{"version": 1, "projects": {root: {"fingerprint", "files", "trusted_at"}}}`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, Any]:
        # Missing or damaged: nothing is trusted, which only means asking again.
        return rule_files.load(self.path, "projects")

    def trusted_fingerprint(self, root: Path) -> str | None:
        entry = self._load()["projects"].get(str(root))
        return entry.get("fingerprint") if isinstance(entry, dict) else None

    def is_trusted(self, root: Path, files: list[Path]) -> bool:
        return self.trusted_fingerprint(root) == fingerprint(root, files)

    def trust(self, root: Path, files: list[Path]) -> str:
        """Record the current content as trusted; returns the fingerprint."""
        value = fingerprint(root, files)
        # Under the cross-process lock: another process trusting another project at the
        # same moment must not lose its entry (read-modify-write of one shared file).
        with file_lock.exclusive(self.path):
            data = self._load()
            data["projects"][str(root)] = {
                "fingerprint": value,
                "files": [p.relative_to(root).as_posix() for p in sorted(files)],
                "trusted_at": datetime.now(UTC).isoformat(),
            }
            rule_files.save(self.path, data, temp_prefix=".trusted.")
        return value
