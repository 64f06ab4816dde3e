"""`Project`: one per project root, opened the same way by every front end.

It owns the settings, the saved data readable without the agent stack (ProjectData:
memory, threads, pending approvals — no LangChain; SavedThreads: deleting threads in a
process that runs no turn), the memory views with their one error
mapping, the feeds front ends subscribe to (turn events, memory changes), the notices a
user must see once (broad root, conflicted stores), and the Session with its agent
stack: opened lazily, ONCE, and shared by everyone using the Project — two ACP sessions
or LSP windows on one folder get one memory service and one set of MCP servers.

Front ends translate their protocol to these calls and events; runtime/project/registry.py
makes sure a process has one Project per root.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.config import Settings
from invincat_server.runtime.project.listeners import Listeners
from invincat_server.runtime.project.memory_views import MemoryViews
from invincat_server.runtime.project.saved_threads import SavedThreads
from invincat_server.runtime.project_data import ProjectData

if TYPE_CHECKING:
    from invincat_server.runtime.events import Event
    from invincat_server.runtime.session import Session
    from invincat_server.runtime.tools.documents import DocumentSource
    from invincat_server.runtime.turn import Turn

log = logging.getLogger("invincat.project")


@dataclass(frozen=True)
class TurnEvent:
    """An event of a turn of the project's Session."""

    turn: Turn
    event: Event


@dataclass(frozen=True)
class MemoryChange:
    """A store of the project changed: `batch_ids` were written (by a turn's memory agent
    or a person's edit through a front end)."""

    scope: str
    batch_ids: list[str]


@dataclass
class SessionOptions:
    """How the shared Session is built; the first front end to ask decides (later ones
    get the Session already open)."""

    documents: DocumentSource | None = None
    """The Session's own document source; a turn may pass its own (ACP does)."""
    auto_approve: bool = False
    model: Any = None
    options: dict[str, Any] | None = None
    """`Session(options=...)`: e.g. `client_mcp_servers`, `trust_project`."""


class Project:
    """The project rooted at `root`."""

    def __init__(self, settings: Settings, root: Path) -> None:
        self.settings = settings
        self.root = root
        self.data = ProjectData(settings, root)
        self.saved_threads = SavedThreads(settings)
        self.memory_views = MemoryViews(self.data)
        self.events: Listeners[TurnEvent] = Listeners("turn event")
        self.memory_changes: Listeners[MemoryChange] = Listeners("memory change")
        self._session: Session | None = None
        self._opening: asyncio.Task[Session] | None = None
        self._closed = False

    # the session -----------------------------------------------------------------
    @property
    def session_if_open(self) -> Session | None:
        return self._session

    async def session(self, options: SessionOptions | None = None) -> Session:
        """The project's one Session, opened on first call (LangChain is imported in a
        worker thread, so the event loop keeps serving meanwhile). Raises ConfigError if
        the model is not configured; then the next call tries again."""
        if self._closed:
            from invincat_server.runtime.errors import SessionError

            raise SessionError(f"The project {self.root} is closed.")
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open(options or SessionOptions()))
        try:
            # Shielded: one caller giving up must not cancel the open the others wait for.
            return await asyncio.shield(self._opening)
        except Exception:
            if self._opening.done():
                self._opening = None  # a failed open (no model configured) is retried
            raise

    async def _open(self, options: SessionOptions) -> Session:
        import importlib

        await asyncio.to_thread(importlib.import_module, "invincat_server.runtime.session")
        from invincat_server.runtime.policy.workspace import Workspace
        from invincat_server.runtime.session import Session

        memory = await asyncio.to_thread(self.data.memory)  # the views' service, shared
        session = Session(
            self.settings,
            Workspace(self.root),
            auto_approve=options.auto_approve,
            documents=options.documents,
            model=options.model,
            options=options.options,
            memory=memory,
        )
        try:
            await session.open()
        except BaseException:
            await session.close()  # half open (stores connected): release what it holds
            raise
        session.add_listener(self._on_turn_event)
        self._session = session
        log.info("session open on %s", self.root)
        return session

    def _on_turn_event(self, turn: Turn, event: Event) -> None:
        self.events.emit(TurnEvent(turn, event))
        if getattr(event, "type", None) == "memory_changed":
            scope, batch = getattr(event, "scope", None), getattr(event, "batch_id", None)
            if isinstance(scope, str):
                self.memory_changes.emit(MemoryChange(scope, [batch] if batch else []))

    # memory ------------------------------------------------------------------------
    def memory_changed(self, scope: str, batch_ids: list[str]) -> None:
        """A front end changed a store (a person's edit): tell every subscriber."""
        if batch_ids:
            self.memory_changes.emit(MemoryChange(scope, batch_ids))

    # notices -----------------------------------------------------------------------
    def notices(self) -> list[str]:
        """What the user must be told on opening the project: the broad-root warning
        (once per root, ever: remembered in $INVINCAT_HOME) and conflicted memory
        stores. Blocking (reads files): call from a worker thread."""
        from invincat_server.runtime.policy.broad_root import broad_root_warning

        notices = []
        if warning := broad_root_warning(self.root, self.settings.home):
            notices.append(warning)
        if conflict := self._conflict():
            notices.append(conflict)
        return notices

    def _conflict(self) -> str | None:
        reader = self.data.memory_reader()
        if reader is not None:
            from invincat_server.runtime.memory.reader import NotSimple

            try:
                reader.check_conflicts()
                return None
            except (NotSimple, OSError):
                pass  # the service says whether it is a conflict or other damage
        from invincat_server.runtime.memory import MergeConflictError

        try:
            self.data.memory().check_conflicts()
        except MergeConflictError as exc:
            return str(exc)
        except Exception as exc:  # other damage is reported by the command that meets it
            log.debug("memory conflict check: %s", exc)
        return None

    # closing -----------------------------------------------------------------------
    async def close(self, *, followup_timeout: float = 60.0) -> None:
        """Stop running turns (approvals they wait for stay pending for a later process)
        and release the stores."""
        self._closed = True
        opening, self._opening = self._opening, None
        if opening is not None and not opening.done():
            opening.cancel()
            try:
                await opening
            except BaseException:  # cancelled or failed: nothing to close
                pass
        session, self._session = self._session, None
        if session is not None:
            await session.close(followup_timeout=followup_timeout)
