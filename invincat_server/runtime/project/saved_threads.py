"""Deleting saved threads without the agent stack: `invincat threads delete` and `prune`.

A process that runs no turn (the CLI) works on the saved records directly (threads.sqlite,
or the `database_url` database: runtime/thread_store.py): no model client, no LangChain,
and no file or table is created where none exists. A front end with an
open Session deletes through `Session.delete_thread` / `prune_threads` instead, which
also refuse a thread one of its turns is running; both use runtime/thread_pruning.py's
`older_than` and `delete_threads`, the one owner of those rules.
Turns running in another process are not visible from either (docs/protocol.md says so).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from invincat_server.runtime import thread_pruning, thread_store

if TYPE_CHECKING:
    from invincat_server.runtime.config import Settings
    from invincat_server.runtime.records import ApprovalRecord, ThreadInfo
    from invincat_server.runtime.thread_store import ThreadRecords


@dataclass(frozen=True)
class SavedThread:
    """A saved thread and the approvals still waiting for a decision on it."""

    info: ThreadInfo
    waiting: list[ApprovalRecord]


class SavedThreads:
    """The saved threads of every project, where runtime/thread_store.py keeps them."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def exist(self) -> bool:
        """Whether any thread was ever saved (the file or the table exists). PostgreSQL
        unreachable: DatabaseUnavailableError (redacted)."""
        return thread_store.anything_saved(self._settings)

    async def thread(self, thread_id: str) -> SavedThread | None:
        async with self._records() as records:
            info = await records.thread(thread_id) if records is not None else None
            if records is None or info is None:
                return None
            return SavedThread(info, await records.pending(thread_id))

    async def older_than(self, days: float) -> list[SavedThread]:
        """Threads last used more than `days` days ago, oldest first."""
        async with self._records() as records:
            if records is None:
                return []
            old = await thread_pruning.older_than(records, days)
            return [SavedThread(info, await records.pending(info.thread_id)) for info in old]

    async def delete(self, thread_ids: list[str]) -> None:
        """Delete each thread and everything stored for it (conversation, approvals,
        memory-agent cursor), then give the freed pages back once."""
        if not thread_ids:
            return
        async with self._records() as records:
            if records is not None:
                await thread_pruning.delete_threads(records, thread_ids)

    @contextlib.asynccontextmanager
    async def _records(self) -> AsyncIterator[ThreadRecords | None]:
        """The records, or None when nothing was ever saved (opening would create it)."""
        if not self.exist():
            yield None
            return
        records = await thread_store.open_records(self._settings)
        try:
            yield records
        finally:
            await records.close()
