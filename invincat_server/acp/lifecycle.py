"""The ACP agent's lifecycle: `initialize`, opening sessions (`session/new`,
`session/load` with the history replayed, `session/list`), closing, and the extension
methods (memory).

The ACP `sessionId` *is* the thread id, so `session/load` after a restart finds the thread
(and any approval left pending in it) by the id the client kept. Every ACP session whose
cwd has the same project root shares ONE core Project (runtime/project/): one Session, one
memory service, one set of MCP servers. What differs per ACP session is the document
source — `fs/*` requests carry the session id — so each session's turns get theirs
(`Session.bind_documents` / `start_turn(documents=)`).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionListCapabilities,
)

from invincat_server import __version__
from invincat_server.acp import updates
from invincat_server.acp.base import AcpSession, AgentBase, log, rpc_error
from invincat_server.acp.documents import ClientDocuments
from invincat_server.acp.listing import list_sessions
from invincat_server.acp.mcp import client_servers
from invincat_server.acp.modes import (
    config_options,
    mode_state,
)


class Lifecycle(AgentBase):
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **_: Any,
    ) -> InitializeResponse:
        fs = getattr(client_capabilities, "fs", None)
        self._can_read = bool(getattr(fs, "read_text_file", False))
        self._can_write = bool(getattr(fs, "write_text_file", False))
        # We speak exactly version 1; the client decides whether it can too.
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                # stdio is baseline; streamable HTTP too; the legacy SSE transport is not.
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    close=SessionCloseCapabilities(), list=SessionListCapabilities()
                ),
            ),
            agent_info=Implementation(name="invincat", title="Invincat", version=__version__),
            auth_methods=[],
        )

    async def close(self) -> None:
        """The client hung up: stop turns; pending approvals stay for the next start."""
        for task in list(self._background):
            task.cancel()
        for acp_session in list(self._sessions.values()):
            with contextlib.suppress(Exception):
                await self._close(acp_session)
        self._sessions.clear()

    async def close_session(self, session_id: str, **_: Any) -> CloseSessionResponse:
        """`session/close`: stop this session's turn and let go of its project; the other
        sessions of the same root keep the shared Session (the last one closes it)."""
        acp_session = self._require(session_id)
        if acp_session.turn is not None and not acp_session.turn.done:
            acp_session.runtime.cancel(acp_session.turn.turn_id)
        await self._close(acp_session)
        return CloseSessionResponse()

    async def _close(self, acp_session: AcpSession) -> None:
        self._sessions.pop(acp_session.session_id, None)
        for task in acp_session.asks.values():
            task.cancel()
        if acp_session.unsubscribe is not None:
            acp_session.unsubscribe()
        # The editor waits: background memory work gets seconds, not the CLI's minute.
        await self._registry().release(acp_session.project, followup_timeout=5.0)

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> NewSessionResponse:
        session_id = "t_" + uuid.uuid4().hex[:12]
        acp_session = await self._open(session_id, cwd, mcp_servers)
        self._later(self._announce(acp_session))
        return NewSessionResponse(
            session_id=session_id,
            modes=mode_state(acp_session.mode),
            config_options=config_options(acp_session.mode),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any
    ) -> LoadSessionResponse:
        from invincat_server.runtime.errors import UnknownThreadError

        if session_id in self._sessions:
            raise rpc_error(f"Session {session_id} is already loaded in this process.")
        acp_session = await self._open(session_id, cwd, mcp_servers)
        try:
            history = await acp_session.runtime.history(session_id)
        except UnknownThreadError:
            await self._close(acp_session)
            raise rpc_error(
                f"Unknown session {session_id!r}: no saved Invincat thread has this id "
                "(a session that never got a prompt is not saved). Start a new session.",
                -32602,
            ) from None
        acp_session.has_thread = True
        root = acp_session.runtime.workspace.root
        waiting = await acp_session.runtime.pending_approvals(session_id)
        pending = {r.tool_call_id for r in waiting if r.tool_call_id}
        for update in updates.history_updates(history, root, pending):
            await self._client.session_update(session_id=session_id, update=update)
        self._later(self._announce(acp_session))
        self._later(self._ask_pending(acp_session))
        return LoadSessionResponse(
            modes=mode_state(acp_session.mode), config_options=config_options(acp_session.mode)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        return await list_sessions(self._registry(), cwd, cursor)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from invincat_server.acp.memory import MEMORY_METHODS, call_memory_method

        if method not in MEMORY_METHODS:
            raise RequestError.method_not_found(f"_{method}")
        acp_session = self._require(str(params.get("sessionId") or ""))
        result, changes = await asyncio.to_thread(
            call_memory_method, acp_session.project, method, params
        )
        sharing = [a for a in self._sessions.values() if a.project is acp_session.project]
        for scope, batch_ids in changes:
            for other in sharing:  # one memory for the root: every session's view changed
                await self._memory_changed(other, scope, batch_ids)
        return result

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.debug("ignored extension notification _%s", method)

    async def _open(self, session_id: str, cwd: str, mcp_servers: Any) -> AcpSession:
        from invincat_server.runtime.config import ConfigError
        from invincat_server.runtime.database import DatabaseUnavailableError
        from invincat_server.runtime.memory.errors import MemoryStoreError
        from invincat_server.runtime.project import SessionOptions

        folder = Path(cwd)
        if not folder.is_absolute() or not folder.is_dir():
            raise rpc_error(f"cwd must be an absolute path to a directory, got {cwd!r}.", -32602)
        try:
            project = self._registry().open(folder)
        except ConfigError as exc:
            raise rpc_error(str(exc)) from None
        documents = ClientDocuments(
            self._transport,
            self._client,
            session_id,
            can_read=self._can_read,
            can_write=self._can_write,
        )
        # The first session of a root opens the Session (LangChain imported off the event
        # loop) with its MCP servers; later ones share it.
        options = SessionOptions(options={"client_mcp_servers": client_servers(mcp_servers)})
        try:
            runtime = await project.session(options)
        except (ConfigError, DatabaseUnavailableError, MemoryStoreError) as exc:
            # Their messages are meant to be shown (the database named redacted): the
            # client gets them as the error, not an internal error.
            await self._registry().release(project)
            raise rpc_error(str(exc)) from None
        runtime.bind_documents(session_id, documents)  # also for turns resumed after load
        acp_session = AcpSession(
            session_id=session_id, runtime=runtime, project=project, documents=documents
        )
        acp_session.unsubscribe = project.events.add(
            lambda item: self._on_runtime_event(acp_session, item.event)
        )
        self._sessions[session_id] = acp_session
        self._later(self._tell_notices(acp_session))
        return acp_session

    async def _tell_notices(self, acp_session: AcpSession) -> None:
        """The project's notices (broad root, conflicted stores) as agent text."""
        for notice in await asyncio.to_thread(acp_session.project.notices):
            if acp_session.session_id not in self._sessions:
                return  # closed meanwhile (a failed session/load): nobody to tell
            await self._say(acp_session, f"**Warning:** {notice}\n")

    def _on_runtime_event(self, acp_session: AcpSession, event: Any) -> None:
        # Memory changes come after turn_end (background extraction): tell the client.
        if getattr(event, "type", None) == "memory_changed":
            self._later(self._memory_changed(acp_session, event.scope, [event.batch_id]))

    async def _memory_changed(
        self, acp_session: AcpSession, scope: str, batch_ids: list[str]
    ) -> None:
        from invincat_server.acp.memory import CHANGED

        await self._client.ext_notification(
            CHANGED, {"sessionId": acp_session.session_id, "scope": scope, "batchIds": batch_ids}
        )
