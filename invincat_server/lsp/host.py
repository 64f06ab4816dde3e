"""The Session behind the language server: opened in the background, events forwarded.

`initialize` must be answered before the LangChain stack is imported (seconds of CPU), so
the session is opened after `initialized`: the stack is imported in a worker thread while
the event loop keeps serving, then `Session.open()` runs. Requests that need the session
wait for that. If the model is not configured, the server keeps running: the user sees
the one-line message once, and every session request fails with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.lsp.errors import rpc_error
from invincat_server.lsp.protocol import EVENT, ErrorCode

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer
    from invincat_server.runtime.config import Settings
    from invincat_server.runtime.session import Session
    from invincat_server.runtime.turn import Turn

log = logging.getLogger("invincat.lsp.host")

STACK_MODULES = ("langchain", "langchain_core", "langgraph", "langchain_openai", "openai")


def stack_loaded() -> bool:
    """True once any part of the LangChain stack has been imported in this process."""
    return any(name in sys.modules for name in STACK_MODULES)


# What `Session.open()` imports. A name the runtime no longer has is skipped: then open()
# imports whatever replaced it itself, which only costs responsiveness, not correctness.
_STACK = (
    "aiosqlite",
    "langgraph.checkpoint.sqlite.aio",
    "invincat_server.runtime.session",
    "invincat_server.runtime.models",
    "invincat_server.runtime.history",
    "invincat_server.runtime.tools",
    "invincat_server.runtime.agents.approval_middleware",
    "invincat_server.runtime.agents.interaction",
    "invincat_server.runtime.agents.main_agent",
    "invincat_server.runtime.agents.planner",
    "invincat_server.runtime.context.middleware",
    "invincat_server.runtime.plan_flow",
)


def _import_stack() -> None:
    """Import the agent stack so that `Session.open()` finds it all in sys.modules."""
    for name in _STACK:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            log.debug("preload skipped %s: %s", name, exc)


class SessionHost:
    """Owns the Session: opening, closing, and forwarding its events to the client."""

    def __init__(self, ls: InvincatLanguageServer) -> None:
        self._ls = ls
        self.folder: Path | None = None
        """The folder the editor opened; the workspace root is its project root."""
        self.root: Path | None = None
        self.settings: Settings | None = None
        self.error: str | None = None
        self.session: Session | None = None
        self.stack_loaded_at_initialize: bool | None = None
        self._opening: asyncio.Task[None] | None = None
        self._closing = False
        self._close_task: asyncio.Future[None] | None = None

    def configure(self, folder: Path) -> None:
        """Called from `initialize`, which must stay cheap: settings, the project root
        and the stack are all loaded later, in `start()`."""
        self.folder = folder
        self.stack_loaded_at_initialize = stack_loaded()

    def start(self) -> asyncio.Task[None]:
        """Open the session in the background (idempotent)."""
        if self._opening is None:
            self._opening = asyncio.create_task(self._open(), name="invincat-session-open")
        return self._opening

    async def require(self) -> Session:
        """The open session; a JSON-RPC error carrying the reason if it cannot open."""
        await asyncio.shield(self.start())
        if self.session is None:
            raise rpc_error(
                ErrorCode.MODEL_NOT_CONFIGURED,
                self.error or "The Invincat session is not available.",
            )
        return self.session

    def cancel_turn(self, turn_id: str) -> bool:
        return self.session.cancel(turn_id) if self.session is not None else False

    async def close(self) -> None:
        """Stop running turns; approvals they wait for stay pending for the next start.

        Idempotent and shielded: `shutdown` and the end of the connection both close, and
        a client that sends `shutdown` and hangs up at once cancels the first caller. Were
        the close itself cancelled half-way (e.g. while SQLite closes), a worker thread
        would stay alive and the process would never exit; so every caller awaits one
        shared close task that runs to the end."""
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._close_once())
        await asyncio.shield(self._close_task)

    async def _close_once(self) -> None:
        # The turns stopped here still emit turn_end, maybe after the editor closed the
        # stream: nothing is forwarded any more.
        self._closing = True
        await self._ls.memory_sync.close()
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._opening
        session, self.session = self.session, None
        if session is not None:
            # An editor waits for shutdown: give background memory work a few seconds,
            # not the CLI's minute (an interrupted extraction is retried next turn).
            await session.close(followup_timeout=5.0)

    async def _open(self) -> None:
        session = await self._create()
        if session is None:
            self._ls.tell_user(self.error or "Invincat could not start.", error=True)
            return
        session.add_listener(self._on_event)
        self.session = session
        from invincat_server.runtime.policy.broad_root import broad_root_warning

        warning = broad_root_warning(session.workspace.root, session.settings.home)
        if warning:
            self._ls.tell_user(warning)  # window/showMessage, Warning: editors show it
        self._ls.memory_sync.start(session.memory)
        log.info("session open on %s", self.root)
        await self._restore_pending(session)

    async def _create(self) -> Session | None:
        from invincat_server.runtime.config import ConfigError, find_project_root, load_settings

        session: Session | None = None
        try:
            self.root = find_project_root(self.folder or Path.cwd())
            self.settings = load_settings()
            await asyncio.to_thread(_import_stack)
            from invincat_server.runtime.policy.workspace import Workspace
            from invincat_server.runtime.session import Session

            session = Session(self.settings, Workspace(self.root), documents=self._ls.documents)
            return await session.open()
        except ConfigError as exc:
            self.error = str(exc)
        except Exception as exc:
            log.exception("opening the session failed")
            self.error = f"Invincat could not start: {type(exc).__name__}: {exc}"
        if session is not None:  # half open (stores connected): release what it holds
            with contextlib.suppress(Exception):
                await session.close()
        return None

    async def _restore_pending(self, session: Session) -> None:
        """Show approvals that survived a restart where they apply (diagnostics)."""
        try:
            for thread in await session.threads(all_workspaces=False):
                for request in await session.pending_approvals(thread.thread_id):
                    self._ls.proposals.add(request.to_json_dict())
        except Exception:
            log.exception("restoring pending approvals failed")

    def _on_event(self, turn: Turn, event: Any) -> None:
        if self._closing or event.type == "tool_output":
            return  # live `execute` output is not (yet) part of the editor protocol
        data = event.to_json_dict()
        self._ls.protocol.notify_json(
            EVENT, {"threadId": turn.thread_id, "turnId": turn.turn_id, "event": data}
        )
        self._ls.turn_progress.on_event(turn.turn_id, event)
        kind = data["type"]
        if kind == "approval_requested":
            self._ls.proposals.add(data, turn.turn_id)
        elif kind == "approval_resolved":
            self._ls.proposals.remove(data["approval_id"])
        elif kind == "tool_result":
            self._ls.documents.deliveries.tool_finished(data["id"])
        elif kind == "turn_end":
            self._ls.proposals.remove_where(turn_id=turn.turn_id)
            self._ls.documents.deliveries.turn_ended(turn.turn_id)
        elif kind == "memory_changed":
            # Background memory work after turn_end: editors refresh their memory views.
            self._ls.memory_sync.changed(data["scope"], [data["batch_id"]])
