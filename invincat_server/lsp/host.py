"""One project's Session behind the language server: opened in the background, events
forwarded. Each workspace folder's project root has one `SessionHost`; lsp/projects.py
owns them and routes requests to them (docs/protocol.md, "Multi-root workspaces").

Start-up, in order (docs/protocol.md, "Start-up"):

1. `initialize` is answered at once: it only records the folders (no settings, no
   LangChain), as fast as a bare pygls server.
2. Right after that answer is written (`Projects.initialize_answered`, called by the
   protocol), each project starts opening in the background and `invincat/statusChanged`
   says `starting`: settings are read and the project's `ProjectData` opens
   (runtime/project_data.py: memory, thread list, history, pending approvals; no agent
   stack). Requests for those wait only for this step, tens of milliseconds.
3. The agent stack is imported in a worker thread while the event loop keeps serving
   (once per process, whatever the number of projects: `Projects.load_stack`),
   then `Session.open()` runs on the same MemoryService; `ready` (or `failed` with the
   message) is announced. Requests that need the session (chat, resolving an approval,
   deleting threads) wait for it. If the model is not configured, the server keeps
   running: the user sees the one-line message once, and every session request fails
   with it; memory and the thread list still work.

The phase, the failure's message and the timings are the core's (`Startup`,
runtime/project/startup.py); this host drives the steps and lsp/projects.py translates
that state to `invincat/status` / `invincat/statusChanged`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.lsp.errors import rpc_error
from invincat_server.lsp.protocol import EVENT, ErrorCode, StatusTimings
from invincat_server.runtime import preload
from invincat_server.runtime.project.startup import Startup

if TYPE_CHECKING:
    from invincat_server.lsp.projects import Projects
    from invincat_server.lsp.server import InvincatLanguageServer
    from invincat_server.runtime.config import Settings
    from invincat_server.runtime.project import Project, TurnEvent
    from invincat_server.runtime.project_data import ProjectData
    from invincat_server.runtime.session import Session

log = logging.getLogger("invincat.lsp.host")

STACK_MODULES = ("langchain", "langchain_core", "langgraph", "langchain_openai", "openai")

STACK_DELAY_ENV = "INVINCAT_TEST_STACK_DELAY"
"""Test-only: seconds the background stack import waits before it begins, so tests can
observe a server whose session is still opening. Not for real use (it only delays)."""


def stack_loaded() -> bool:
    """True once any part of the LangChain stack has been imported in this process."""
    return any(name in sys.modules for name in STACK_MODULES)


def import_stack(stop: threading.Event, wait_idle: Callable[[], object] | None = None) -> float:
    """Import the agent stack so that `Session.open()` finds it all in sys.modules; the
    seconds it took. Once per process (lsp/projects.py shares it between projects).
    `wait_idle` is called before each module: the requests a user waits for go first
    (lsp/foreground.py)."""
    delay = os.environ.get(STACK_DELAY_ENV)
    if delay and stop.wait(float(delay)):
        return 0.0  # the server is closing: a worker thread must not hold up its exit
    from invincat_server.runtime.bulk_import import bulk_import

    began = time.perf_counter()
    with bulk_import():  # no full GC passes over the ~200,000 objects it loads
        preload.preload(preload.MEMORY, wait_idle)
        preload.preload(preload.STACK, wait_idle)
    return time.perf_counter() - began


def _build_model(settings: Settings) -> Any:
    """The chat model (its HTTP clients and TLS context cost a few hundred ms that would
    otherwise block the event loop). Raises ConfigError if the model is not configured."""
    from invincat_server.runtime.bulk_import import bulk_import
    from invincat_server.runtime.models import build_chat_model

    with bulk_import():
        return build_chat_model(settings)


def _load_project(projects: Projects, root: Path) -> Project:
    """Settings and the core Project (its data readable at once: step 2; a worker
    thread). Raises ConfigError for a broken config file."""
    preload.preload(preload.LIGHT)
    return projects.core.open(root)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


class SessionHost:
    """One project (a project root): its data, its Session (opening, closing), and its
    events forwarded to the client."""

    def __init__(self, ls: InvincatLanguageServer, projects: Projects, root: Path) -> None:
        self._ls = ls
        self._projects = projects
        self.root: Path = root
        """The project root of its workspace folders (runtime/project/root.py)."""
        self.settings: Settings | None = None
        self.startup = Startup(changed=projects.announce)
        """Its phase, failure and timings (runtime/project/startup.py); `status` sends them."""
        self.session: Session | None = None
        self.project: ProjectData | None = None
        """The project's data without the agent stack; set in step 2 of the start-up."""
        self.core: Project | None = None
        """The core Project (runtime/project/) this host adapts to the protocol."""
        self._initialize_ms = projects.initialize_ms
        self._opening: asyncio.Task[None] | None = None
        self._project_ready: asyncio.Event | None = None
        self._closing = False
        self._muted = False
        """No more events to the client (it is going away)."""
        self._close_task: asyncio.Future[None] | None = None

    @property
    def closed(self) -> bool:
        return self._closing

    @property
    def error(self) -> str | None:
        return self.startup.error

    @property
    def timings(self) -> StatusTimings:
        """The start-up's timings in the protocol's words (milliseconds)."""
        startup = self.startup
        return {
            "initializeMs": self._initialize_ms,
            "stackImportMs": _ms(startup.stack_import_seconds),
            "sessionOpenMs": _ms(startup.session_open_seconds),
        }

    def start(self) -> asyncio.Task[None]:
        """Open the session in the background (idempotent)."""
        if self._opening is None:
            self.startup.begin()
            self._project_ready = asyncio.Event()
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

    async def project_data(self) -> ProjectData:
        """The project's data, as soon as settings are read (never waits for the agent
        stack); a JSON-RPC error carrying the reason if the settings cannot be read."""
        self.start()
        assert self._project_ready is not None
        await self._project_ready.wait()
        if self.project is None:
            raise rpc_error(
                ErrorCode.MODEL_NOT_CONFIGURED,
                self.error or "The Invincat settings could not be read.",
            )
        return self.project

    def cancel_turn(self, turn_id: str) -> bool:
        return self.session.cancel(turn_id) if self.session is not None else False

    async def close(self, *, editor_stays: bool = False) -> None:
        """Stop running turns; approvals they wait for stay pending for the next start.
        `editor_stays`: the project closes but the editor does not (its folder was
        removed), so the stopped turns' last events (`turn_end`) still reach it.

        Idempotent and shielded: `shutdown` and the end of the connection both close, and
        a client that sends `shutdown` and hangs up at once cancels the first caller. Were
        the close itself cancelled half-way (e.g. while SQLite closes), a worker thread
        would stay alive and the process would never exit; so every caller awaits one
        shared close task that runs to the end."""
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._close_once(editor_stays))
        await asyncio.shield(self._close_task)

    async def _close_once(self, editor_stays: bool) -> None:
        # The turns stopped here still emit turn_end, maybe after the editor closed the
        # stream: then nothing is forwarded any more.
        self._closing = True
        self._muted = not editor_stays
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._opening
        if self._project_ready is not None:
            self._project_ready.set()  # waiters get "not available", not a hang
        self.session = None
        core, self.core = self.core, None
        if core is not None:
            # An editor waits for shutdown: give background memory work a few seconds,
            # not the CLI's minute (an interrupted extraction is retried next turn).
            await self._projects.core.release(core, followup_timeout=5.0)
        self._muted = True

    async def _open(self) -> None:
        self._projects.announce()  # `starting`: from here on the client may hear statusChanged
        project = await self._load_project()
        session = await self._create(project) if project is not None else None
        if session is None:
            self._projects.tell_user(self.startup.fail(), error=True)
            return
        assert self.core is not None
        for listener in self._listeners():
            self.core.events.add(listener)
        self.session = session
        for notice in await asyncio.to_thread(self.core.notices):
            self._ls.tell_user(notice)  # window/showMessage, Warning: editors show it
        self._ls.memory_sync.start(session.memory, self.root)
        log.info("session open on %s", self.root)
        self.startup.ready()
        await self._restore_pending(session)

    async def _load_project(self) -> Project | None:
        from invincat_server.runtime.config import ConfigError

        project: Project | None = None
        try:
            project = await asyncio.to_thread(_load_project, self._projects, self.root)
        except ConfigError as exc:
            self.startup.step_failed(exc)
        except Exception as exc:
            log.exception("reading the settings failed")
            self.startup.step_failed(exc)
        if project is not None and self._closing:
            await self._projects.core.release(project)  # closed while it was opening
            project = None
        if project is not None:
            self.core, self.project, self.settings = project, project.data, project.settings
            log.info("project data open on %s", project.root)
        assert self._project_ready is not None
        self._project_ready.set()
        return project

    async def _create(self, project: Project) -> Session | None:
        from invincat_server.runtime.config import ConfigError

        try:
            self.startup.stack_imported(await self._projects.load_stack())  # once per process
            if self._closing:
                return None
            model = await asyncio.to_thread(_build_model, project.settings)
            from invincat_server.runtime.project import SessionOptions

            # The Project's one Session, on the MemoryService the memory views use.
            options = SessionOptions(documents=self._ls.documents, model=model)
            return await project.session(options)
        except ConfigError as exc:
            self.startup.step_failed(exc)
        except Exception as exc:
            log.exception("opening the session failed")
            self.startup.step_failed(exc)
        return None

    async def _restore_pending(self, session: Session) -> None:
        """Show approvals that survived a restart where they apply (diagnostics)."""
        try:
            for thread in await session.threads(all_workspaces=False):
                for request in await session.pending_approvals(thread.thread_id):
                    self._ls.proposals.add(request.to_json_dict(), root=self.root)
        except Exception:
            log.exception("restoring pending approvals failed")

    # events: one listener per component, fanned out by the core (a failing one is
    # logged and the others still hear: runtime/project/listeners.py)
    def _listeners(self) -> list[Callable[[TurnEvent], None]]:
        return [self._forward, self._progress, self._proposals, self._deliveries, self._memory]

    def _live(self, item: TurnEvent) -> bool:
        # Live `execute` output is not (yet) part of the editor protocol.
        return not self._muted and item.event.type != "tool_output"

    def _forward(self, item: TurnEvent) -> None:
        if self._live(item):
            turn, data = item.turn, item.event.to_json_dict()
            self._ls.protocol.notify_json(
                EVENT, {"threadId": turn.thread_id, "turnId": turn.turn_id, "event": data}
            )

    def _progress(self, item: TurnEvent) -> None:
        if self._live(item):
            self._ls.turn_progress.on_event(item.turn.turn_id, item.event)

    def _proposals(self, item: TurnEvent) -> None:
        if not self._live(item):
            return
        event, kind = item.event, item.event.type
        if kind == "approval_requested":
            data = event.to_json_dict()
            self._projects.approval_seen(data["approval_id"], self)
            self._ls.proposals.add(data, item.turn.turn_id, root=self.root)
        elif kind == "approval_resolved":
            self._ls.proposals.remove(getattr(event, "approval_id", ""))
        elif kind == "turn_end":
            self._ls.proposals.remove_where(turn_id=item.turn.turn_id)

    def _deliveries(self, item: TurnEvent) -> None:
        if not self._live(item):
            return
        if item.event.type == "tool_result":
            self._ls.documents.deliveries.tool_finished(getattr(item.event, "id", ""))
        elif item.event.type == "turn_end":
            self._ls.documents.deliveries.turn_ended(item.turn.turn_id)

    def _memory(self, item: TurnEvent) -> None:
        if self._live(item) and item.event.type == "memory_changed":
            # Background memory work after turn_end: editors refresh their memory views.
            event = item.event
            scope, batch = getattr(event, "scope", ""), getattr(event, "batch_id", None)
            self._ls.memory_sync.changed(scope, [batch], self.root)
