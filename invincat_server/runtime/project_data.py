"""A workspace's saved data, readable without the agent stack: governed memory, the
thread list, a thread's history and the approvals waiting for a decision.

The language server opens this right after `initialize` (settings, the project root and
one MemoryService: tens of milliseconds, no model client), so an editor's memory
sidebar, thread list and pending approvals fill while the LangChain stack (seconds of
imports) still loads. The Session then runs on the same MemoryService (`Session(…,
memory=data.memory())`): one writer per process, every governance rule, lock and tamper
check the same whichever asked.

Nothing here imports LangChain, LangGraph or the OpenAI SDK; tests check `sys.modules`.
Reads go to `threads.sqlite` (or the `database_url` database: runtime/thread_store.py)
through short read connections of their own; what needs
the agent stack (resuming an interrupt only recorded in a checkpoint, a checkpoint in an
encoding the light reader does not know) is left to the Session once it is open.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.config import Settings
from invincat_server.runtime.errors import UnknownThreadError
from invincat_server.runtime.memory.reader import FULL_READ_ENV, MemoryReader

if TYPE_CHECKING:
    from invincat_server.runtime.memory.service import MemoryService
    from invincat_server.runtime.records import ApprovalRecord, ThreadInfo


class ProjectData:
    """The saved data of the workspace rooted at `root`."""

    def __init__(self, settings: Settings, root: Path) -> None:
        self.settings = settings
        self.root = root
        self._memory: MemoryService | None = None
        self._memory_lock = threading.Lock()
        self._reader: MemoryReader | None = None

    def memory(self, notify: Callable[[str], None] | None = None) -> MemoryService:
        """This process's one MemoryService for the workspace (created on first use; may
        raise MemoryStoreError). `notify`, when given, becomes where it reports problems
        found by background work (the Session's, once it opens)."""
        with self._memory_lock:  # first use may come from two worker threads at once
            if self._memory is None:
                from invincat_server.runtime.memory.backend import open_service

                # The JSON store files, or PostgreSQL with `database_url` (backend.py).
                self._memory = open_service(
                    self.settings.home, self.root, self.settings.database_url
                )
            if notify is not None:
                self._memory.set_notify(notify)
            return self._memory

    def memory_reader(self) -> MemoryReader | None:
        """The quick read path over the stores (runtime/memory/reader.py: no pydantic),
        or None while the MemoryService reports a store problem (its views list those)
        or memory is in the database."""
        service = self._memory
        if os.environ.get(FULL_READ_ENV) == "1" or (service is not None and service.problems()):
            return None
        if self.settings.database_url is not None:
            return None  # the quick reader reads files; the database's rows are the service's
        if self._reader is None:
            self._reader = MemoryReader(self.settings.home, self.root)
        return self._reader

    async def threads(self, *, all_workspaces: bool = False) -> list[ThreadInfo]:
        threads, _ = await self._read(None if all_workspaces else str(self.root))
        return threads

    async def history(self, thread_id: str) -> list[dict[str, Any]] | None:
        """The thread's messages as `Session.history` gives them; None when its checkpoint
        cannot be decoded without the agent stack (then ask the Session)."""
        from invincat_server.runtime.history import fields_to_dicts
        from invincat_server.runtime.thread_store import latest_messages

        def read() -> tuple[bool, list[dict[str, Any]] | None]:
            threads, _ = self._read_now(None)
            if not any(t.thread_id == thread_id for t in threads):
                return False, None
            messages = latest_messages(self.settings, thread_id)
            # Worded here, off the event loop: each tool call's title is redacted
            # (runtime/tool_phrases.py), and the first redaction compiles its rules.
            return True, None if messages is None else fields_to_dicts(messages)

        known, history = await asyncio.to_thread(read)
        if not known:
            raise UnknownThreadError(f"Unknown thread {thread_id!r}.")
        return history

    async def pending_approvals(
        self, thread_id: str | None = None, *, all_workspaces: bool = False
    ) -> list[dict[str, Any]]:
        """Recorded approvals still waiting for a decision, of `thread_id` or of every
        thread of this workspace (of every workspace with `all_workspaces`, for a front
        end that must find which workspace an approval belongs to), as
        `approval_requested` event dicts: the event as it was recorded
        (`ApprovalRequested.to_json_dict()`; not validated again here, which would import
        pydantic's event models on the way to the first answer).

        Only the approvals table: an interrupt a crashed process checkpointed but never
        recorded is found by `Session.pending_approvals`, which reads the checkpoints."""
        if all_workspaces and thread_id is None:
            _threads, pending = await self._read(None)
            return [r.request for r in pending]
        threads, pending = await self._read(str(self.root))
        wanted = {thread_id} if thread_id is not None else {t.thread_id for t in threads}
        return [r.request for r in pending if r.thread_id in wanted]

    async def _read(self, workspace: str | None) -> tuple[list[ThreadInfo], list[ApprovalRecord]]:
        return await asyncio.to_thread(self._read_now, workspace)

    def _read_now(self, workspace: str | None) -> tuple[list[ThreadInfo], list[ApprovalRecord]]:
        from invincat_server.runtime.thread_store import read_saved

        return read_saved(self.settings, workspace)
