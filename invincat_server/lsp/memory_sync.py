"""Memory for the editor: the store service behind `invincat/memory/*`, and
`invincat/memory/didChange` whenever a store changes, whoever changed it.

The watching is the core's store change feed (runtime/project/store_watch.py: the user
store watched once, each open project's store, polled every second); this module
subscribes to it and turns each change into one notification. A project-scope
notification names the project's folder (`folder`, the uri of its first workspace
folder).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from invincat_server.lsp.errors import rpc_error
from invincat_server.lsp.protocol import MEMORY_DID_CHANGE, ErrorCode, MemoryDidChangeParams

if TYPE_CHECKING:
    from invincat_server.lsp.host import SessionHost
    from invincat_server.lsp.server import InvincatLanguageServer
    from invincat_server.runtime.memory import MemoryService
    from invincat_server.runtime.memory.paths import StoreFiles
    from invincat_server.runtime.project.store_watch import StoreChange, StoreWatch
    from invincat_server.runtime.project_data import ProjectData


def _open_service(project: ProjectData) -> MemoryService:
    """The project's MemoryService, in a worker thread: the first call imports the memory
    package (pydantic models, hundreds of ms on a busy machine), which must not stall the
    event loop and every other request with it. The views the handlers use next too."""
    from invincat_server.runtime.memory import MemoryStoreError, views  # noqa: F401

    try:
        return project.memory()
    except MemoryStoreError as exc:
        raise rpc_error(ErrorCode.MEMORY_UNAVAILABLE, str(exc)) from None


class MemorySync:
    """The memory service the editor reads and changes, and its change notifications."""

    def __init__(self, ls: InvincatLanguageServer) -> None:
        self._ls = ls
        self._watch: StoreWatch | None = None
        self._closed = False

    @property
    def feed(self) -> StoreWatch:
        """The core's store watch (made on first use: `initialize` must not import it)."""
        if self._watch is None:
            from invincat_server.runtime.project.store_watch import StoreWatch

            self._watch = StoreWatch()
            self._watch.changes.add(self._notify)
        return self._watch

    async def service(self, host: SessionHost) -> MemoryService:
        """The project's one MemoryService (its Session runs on the same one), as soon as
        settings are read: it never waits for the agent stack, and it works when the
        model is not configured, so the memory sidebar fills at once."""
        project = await host.project_data()
        service = await asyncio.to_thread(_open_service, project)
        self.start(service, host.root)
        return service

    def start(self, service: MemoryService, root: Path) -> None:
        """Begin watching the stores of `service`, the project at `root`'s: their files,
        and the memory database's commits when memory lives there."""
        self.watch(service.files.values(), root)
        feed = service.writer.change_feed()
        if feed is not None and not self._closed:
            self.feed.follow_database(*feed, root)

    def watch(self, stores: Iterable[StoreFiles], root: Path) -> None:
        """Begin watching these store files of the project at `root` (the quick memory
        reads call it too, so an editor hears of changes before any MemoryService)."""
        if not self._closed:
            self.feed.watch(stores, root)

    def forget(self, root: Path) -> None:
        if self._watch is not None:
            self._watch.forget(root)

    async def close(self) -> None:
        self._closed = True
        if self._watch is not None:
            await self._watch.close()

    def changed(self, scope: str, batch_ids: list[str | None], root: Path) -> None:
        """This process changed `scope` of the project at `root` in `batch_ids`."""
        if not self._closed:
            self.feed.changed(scope, batch_ids, root)

    def _notify(self, change: StoreChange) -> None:
        if self._closed:
            return
        params: MemoryDidChangeParams = {"scope": change.scope, "batchId": change.batch_id}
        if change.root is not None:
            params["folder"] = self._ls.projects.folder_uri(change.root)
        self._ls.protocol.notify_json(MEMORY_DID_CHANGE, dict(params))
