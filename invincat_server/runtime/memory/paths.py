"""Where a scope keeps its store, journal, lock and backups.

Plain paths, no validation models: the quick read path (reader.py) needs them without
importing pydantic, and store.py, the write path, uses the same definitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from invincat_server.runtime.memory.models import Scope


def utc_stamp() -> str:
    """Timestamp for backup names: sortable, no characters that need quoting."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


@dataclass(frozen=True)
class StoreFiles:
    """Where one scope keeps its store, journal, lock and backups."""

    scope: Scope
    store: Path

    @property
    def directory(self) -> Path:
        return self.store.parent

    @property
    def root(self) -> Path:
        """Where the no-follow walk to these files starts (runtime/private_files.py): the
        project root for project state, so a `.invincat` symlink is refused, and
        `$INVINCAT_HOME` itself for the user's (the user may keep it behind a link)."""
        return self.directory.parent if self.scope == "project" else self.directory

    @property
    def journal(self) -> Path:
        return self.directory / f"memory_{self.scope}.journal.jsonl"

    @property
    def lock(self) -> Path:
        return self.directory / f"memory_{self.scope}.lock"

    def backup(self, kind: str, suffix: str = ".json") -> Path:
        return self.directory / f"memory_{self.scope}.{kind}-{utc_stamp()}{suffix}"


def store_files(home: Path, project_root: Path) -> dict[Scope, StoreFiles]:
    return {
        "user": StoreFiles("user", home / "memory_user.json"),
        "project": StoreFiles("project", project_root / ".invincat" / "memory_project.json"),
    }
