"""The state every part of the ACP agent shares: one `AcpSession` per ACP session, and
`AgentBase`, which holds the connection and the sessions and the few helpers all parts use.

The agent is split by concern into mixins over this base (acp/agent.py puts them
together): lifecycle.py (initialize, sessions, extension methods), turns.py (prompts and
the turn's events), asking.py (permission requests), commands.py (slash commands and
modes), rewind.py (the `/rewind` dialogue). A method one part calls in another is
declared here, so each part type-checks alone.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    PromptResponse,
)

from invincat_server.acp import updates
from invincat_server.acp.transport import StdioTransport
from invincat_server.runtime.events import (
    ApprovalRequested,
)
from invincat_server.runtime.tool_traits import WRITES_FILES

if TYPE_CHECKING:
    from invincat_server.runtime.project import Projects

log = logging.getLogger("invincat.acp")

SERVER_ERROR = -32000


def rpc_error(message: str, code: int = SERVER_ERROR) -> RequestError:
    """A JSON-RPC error whose message says what to do."""
    return RequestError(code, message)


@dataclass
class AcpSession:
    session_id: str
    runtime: Any  # runtime.session.Session (imported lazily: it pulls in LangChain)
    project: Any = None
    """The core Project (runtime/project/) it shares with the other sessions of its root."""
    documents: Any = None
    """This session's client as the document source of its turns."""
    unsubscribe: Any = None
    """Stops this session hearing its project's turn events."""
    mode: str = "agent"
    has_thread: bool = False
    turn: Any = None
    ask_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    asks: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    """approval id → the task asking the client, while it waits."""
    last_error: str | None = None
    pump: asyncio.Task[str] | None = None
    """Sends the running turn's events as updates; its result is the turn's status."""
    paused: asyncio.Future[None] | None = None
    """Set when the user chose to reply in text: the prompt answers, the turn waits."""
    awaiting_reply: ApprovalRequested | None = None
    """The plan (refine) or question (answer) waiting for the text the next prompt carries."""
    open_calls: list[str] = field(default_factory=list)
    """Tool calls of the running turn shown to the client and not finished yet."""
    approval_calls: dict[str, str] = field(default_factory=dict)
    """approval id → the tool call it is about (marked in progress once approved)."""


class AgentBase:
    """The connection, the sessions and the helpers every part uses."""

    def __init__(self, transport: StdioTransport) -> None:
        self._transport = transport
        self._client: Any = None
        self._can_read = False
        self._can_write = False
        self._sessions: dict[str, AcpSession] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._projects: Projects | None = None
        """The core's registry (runtime/project/): one Project per root in the process."""

    def on_connect(self, conn: Any) -> None:
        self._client = conn

    def _registry(self) -> Projects:
        """The core's registry, made on first use (the ACP process starts without it)."""
        if self._projects is None:
            from invincat_server.runtime.project import Projects

            self._projects = Projects()
        return self._projects

    def _require(self, session_id: str) -> AcpSession:
        acp_session = self._sessions.get(session_id)
        if acp_session is None:
            raise rpc_error(
                f"Unknown session {session_id!r}; create one with session/new or load it "
                "with session/load first.",
                -32602,
            )
        return acp_session

    async def _say(self, acp_session: AcpSession, message: str) -> PromptResponse:
        await self._client.session_update(
            session_id=acp_session.session_id, update=updates.agent_text(message)
        )
        return PromptResponse(stop_reason="end_turn")

    def _diff(self, acp_session: AcpSession, name: str, args: dict[str, Any]) -> list[Any] | None:
        """`diff` content for a file edit, as the runtime would make it (None if it cannot)."""
        if name not in WRITES_FILES:
            return None
        from invincat_server.runtime.tools.preview import preview_change

        runtime = acp_session.runtime
        try:
            change = preview_change(runtime.workspace, acp_session.documents, name, args)
        except Exception as exc:  # the tool itself reports why it cannot run
            log.debug("no diff for %s: %s", name, exc)
            return None
        if change is None:
            return None
        return [updates.diff_content(change.abs_path, change.old_text, change.new_text)]

    def _later(self, coro: Any) -> asyncio.Task[Any]:
        """Run after the current request is answered (updates that must follow it)."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background work failed", exc_info=task.exception())

    # implemented by the other parts (see the module docstring) ---------------------
    def _start_ask(self, acp_session: AcpSession, request: ApprovalRequested) -> None:
        raise NotImplementedError

    async def _ask_pending(self, acp_session: AcpSession) -> None:
        raise NotImplementedError

    async def _follow(self, acp_session: AcpSession, turn: Any) -> str:
        raise NotImplementedError

    async def _announce(self, acp_session: AcpSession) -> None:
        raise NotImplementedError

    async def _memory_changed(
        self, acp_session: AcpSession, scope: str, batch_ids: list[str]
    ) -> None:
        raise NotImplementedError

    async def _offload(self, acp_session: AcpSession) -> PromptResponse:
        raise NotImplementedError

    async def _memory_summary(self, acp_session: AcpSession) -> PromptResponse:
        raise NotImplementedError

    async def _rewind(self, acp_session: AcpSession, arg: str) -> PromptResponse:
        raise NotImplementedError
