"""One Project per project root in a process, shared by whoever opens it, closed when the
last user lets go (refcounted): two ACP sessions, or an LSP window and an ACP session, in
one folder share one Session, one memory service, one set of MCP servers."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from invincat_server.runtime.config import Settings
from invincat_server.runtime.project.project import Project
from invincat_server.runtime.project.root import project_root


class Projects:
    """The open projects of this process, by root."""

    def __init__(self, settings: Settings | None = None) -> None:
        """`settings`: None reads them (`load_settings`) on the first `open`, which then
        raises ConfigError for a broken config file."""
        self._settings = settings
        self._open: dict[Path, Project] = {}
        self._users: dict[Path, int] = {}
        self._lock = asyncio.Lock()
        self._opening = threading.Lock()  # the language server opens from worker threads

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from invincat_server.runtime.config import load_settings

            self._settings = load_settings()
        return self._settings

    def get(self, root: Path) -> Project | None:
        return self._open.get(root)

    def open(self, folder: Path) -> Project:
        """The Project of `folder`'s project root, opened if need be; each call must be
        matched by one `release`."""
        with self._opening:
            settings = self.settings
            root = project_root(folder)
            project = self._open.get(root)
            if project is None:
                project = self._open[root] = Project(settings, root)
            self._users[root] = self._users.get(root, 0) + 1
            return project

    async def release(self, project: Project, *, followup_timeout: float = 60.0) -> None:
        """One user is done with `project`; the last one closes it."""
        async with self._lock:
            with self._opening:
                left = self._users.get(project.root, 0) - 1
                if left > 0:
                    self._users[project.root] = left
                    return
                self._users.pop(project.root, None)
                if self._open.get(project.root) is project:
                    del self._open[project.root]
        await project.close(followup_timeout=followup_timeout)

    async def close(self, *, followup_timeout: float = 60.0) -> None:
        """Close every project (the process is ending)."""
        with self._opening:
            projects = list(self._open.values())
            self._open.clear()
            self._users.clear()
        await asyncio.gather(*(p.close(followup_timeout=followup_timeout) for p in projects))
