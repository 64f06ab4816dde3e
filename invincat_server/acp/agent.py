"""The ACP agent: each ACP session is one Invincat thread with its own runtime Session.

The ACP `sessionId` *is* the thread id, so `session/load` after a restart finds the thread
(and any approval left pending in it) by the id the client kept. A runtime Session is
opened per ACP session because its DocumentSource talks to the client on behalf of that
session (`fs/*` requests carry the session id).

Turns stream as `session/update` notifications; `session/prompt` answers when the turn
ends, with the stop reason. Approvals are asked one at a time per session with
`session/request_permission` and resolved through `Session.resolve`, where the first
decision from any front end wins.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    ToolCallUpdate,
    ToolKind,
    UnstructuredCommandInput,
)

from invincat_server import __version__
from invincat_server.acp import rules, updates
from invincat_server.acp.documents import ClientDocuments
from invincat_server.acp.listing import list_sessions
from invincat_server.acp.mcp import client_servers
from invincat_server.acp.modes import (
    checked_mode,
    checked_option,
    config_options,
    mode_state,
    mode_updates,
)
from invincat_server.acp.permissions import (
    REFINE,
    REPLY,
    DenyRule,
    decision_for,
    options_for,
    reply_decision,
)
from invincat_server.acp.prompt import find_command, read_prompt
from invincat_server.acp.transport import StdioTransport
from invincat_server.runtime.errors import SessionError
from invincat_server.runtime.events import (
    ApprovalRequested,
    ApprovalResolved,
    Error,
    MessageDelta,
    Todos,
    ToolCall,
    ToolResult,
)
from invincat_server.runtime.tool_traits import WRITES_FILES

log = logging.getLogger("invincat.acp")

COMMANDS = {
    "plan": ("Plan first: a read-only planner proposes a plan to approve", "what to plan"),
    "offload": ("Move all but the latest turn out of the model's context into a file", None),
    "memory": ("List what Invincat remembers about you and this project", None),
    "rules": (rules.DESCRIPTION, rules.HINT),
}
DROPPED_PLAN = (
    "The user switched back to agent mode instead of refining the plan: the plan is dropped; "
    "do not carry it out."
)
STOP_REASONS: dict[str, StopReason] = {"completed": "end_turn", "cancelled": "cancelled"}
SERVER_ERROR = -32000


def rpc_error(message: str, code: int = SERVER_ERROR) -> RequestError:
    """A JSON-RPC error whose message says what to do."""
    return RequestError(code, message)


@dataclass
class AcpSession:
    session_id: str
    runtime: Any  # runtime.session.Session (imported lazily: it pulls in LangChain)
    mode: str = "agent"
    has_thread: bool = False
    turn: Any = None
    deny_rules: list[DenyRule] = field(default_factory=list)
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


class InvincatAgent:
    """Implements the SDK's `Agent` interface (method names and keyword arguments)."""

    def __init__(self, transport: StdioTransport) -> None:
        self._transport = transport
        self._client: Any = None
        self._can_read = False
        self._can_write = False
        self._sessions: dict[str, AcpSession] = {}
        self._background: set[asyncio.Task[Any]] = set()

    def on_connect(self, conn: Any) -> None:
        self._client = conn

    # lifecycle ----------------------------------------------------------------------
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
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="invincat", title="Invincat", version=__version__),
            auth_methods=[],
        )

    async def close(self) -> None:
        """The client hung up: stop turns; pending approvals stay for the next start."""
        for task in list(self._background):
            task.cancel()
        for acp_session in self._sessions.values():
            for task in acp_session.asks.values():
                task.cancel()
            with contextlib.suppress(Exception):
                await acp_session.runtime.close(followup_timeout=5.0)
        self._sessions.clear()

    # sessions -----------------------------------------------------------------------
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
            del self._sessions[session_id]
            await acp_session.runtime.close()
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

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        await self._set_mode(self._require(session_id), checked_mode(mode_id))
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        acp_session = self._require(session_id)
        checked_option(config_id)
        await self._set_mode(acp_session, checked_mode(value))
        return SetSessionConfigOptionResponse(config_options=config_options(acp_session.mode))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        return await list_sessions(cwd, cursor)

    async def _set_mode(self, acp_session: AcpSession, mode: str) -> None:
        acp_session.mode = mode
        for update in mode_updates(mode):
            await self._client.session_update(session_id=acp_session.session_id, update=update)
        waiting = acp_session.awaiting_reply
        if mode == "agent" and waiting is not None and waiting.kind == "plan":
            await self._drop_refinement(acp_session, waiting)

    async def _drop_refinement(self, acp_session: AcpSession, request: ApprovalRequested) -> None:
        """Back to agent mode while a plan waits for Refine feedback: the user left planning,
        so the plan is rejected and its turn ends; the next prompt is an ordinary one."""
        acp_session.awaiting_reply = None
        decision = {"type": "reject", "message": DROPPED_PLAN}
        result = await acp_session.runtime.resolve(request.approval_id, decision)
        if not result.resolved:
            log.info("plan %s not dropped: %s", request.approval_id, result.reason)
        if acp_session.pump is not None:
            # Answer once the plan's turn is over, so the next prompt finds the session idle.
            await asyncio.wait({acp_session.pump})
        await self._client.session_update(
            session_id=acp_session.session_id,
            update=updates.agent_text("\n\nThe plan is dropped: back in agent mode.\n"),
        )

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        acp_session = self._require(session_id)
        blocks = read_prompt(prompt, acp_session.runtime.workspace)
        if acp_session.awaiting_reply is not None:
            return await self._reply(acp_session, blocks.text)
        if acp_session.turn is not None and not acp_session.turn.done:
            raise rpc_error(
                f"Session {session_id} is still working on the previous prompt; "
                "wait for it or cancel it (session/cancel) first."
            )
        mode = acp_session.mode
        command, rest = find_command(blocks, COMMANDS)
        if command == "offload":
            return await self._offload(acp_session)
        if command == "memory":
            return await self._memory_summary(acp_session)
        if command == "rules":
            answer = rules.rules_text(acp_session.runtime.policy, acp_session.deny_rules, rest)
            return await self._say(acp_session, answer)
        if command == "plan":
            mode = "plan"
        text = blocks.text
        if not text.strip():
            raise rpc_error("The prompt is empty; type what you want done.", -32602)
        runtime = acp_session.runtime
        try:
            if not acp_session.has_thread:
                await runtime.create_thread(session_id, text)
                acp_session.has_thread = True
            turn = await runtime.start_turn(text, session_id, mode=mode, context=blocks.context)
        except SessionError as exc:
            raise rpc_error(str(exc)) from None
        acp_session.turn = turn
        acp_session.last_error = None
        acp_session.pump = asyncio.ensure_future(self._follow(acp_session, turn))
        return await self._until_turn_end_or_reply(acp_session)

    async def _until_turn_end_or_reply(self, acp_session: AcpSession) -> PromptResponse:
        """Answer the prompt when the turn ends — or, when the user chose to reply in text,
        at once: the turn stays paused and the next prompt is the reply (see `_reply`)."""
        pump, turn = acp_session.pump, acp_session.turn
        assert pump is not None and turn is not None
        acp_session.paused = asyncio.get_running_loop().create_future()
        try:
            waiting: set[asyncio.Future[Any]] = {pump, acp_session.paused}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            acp_session.runtime.cancel(turn.turn_id)
            raise
        if not pump.done():
            return PromptResponse(stop_reason="end_turn")
        status = pump.result()
        if status == "failed":
            # stopReason has no "error": a failed turn is a JSON-RPC error with the reason
            # (also streamed as text); the session stays usable for the next prompt.
            raise rpc_error(acp_session.last_error or "The turn failed; see the log on stderr.")
        return PromptResponse(stop_reason=STOP_REASONS.get(status, "end_turn"))

    async def _reply(self, acp_session: AcpSession, text: str) -> PromptResponse:
        """The prompt is the text a paused plan (refine) or question (answer) waits for."""
        request, acp_session.awaiting_reply = acp_session.awaiting_reply, None
        assert request is not None
        result = await acp_session.runtime.resolve(
            request.approval_id, reply_decision(request, text)
        )
        if not result.resolved:
            raise rpc_error(f"Your reply could not be applied: {result.reason}")
        if acp_session.pump is None or acp_session.pump.done():
            return PromptResponse(stop_reason="end_turn")
        return await self._until_turn_end_or_reply(acp_session)

    async def cancel(self, session_id: str, **_: Any) -> None:
        acp_session = self._sessions.get(session_id)
        if acp_session is None or acp_session.turn is None:
            return
        acp_session.runtime.cancel(acp_session.turn.turn_id)

    # turns --------------------------------------------------------------------------
    async def _follow(self, acp_session: AcpSession, turn: Any) -> str:
        """Send the turn's events as updates until it ends; its status."""
        try:
            async for event in turn.events():
                try:
                    await self._send_event(acp_session, event)
                except (ConnectionError, BrokenPipeError):
                    raise
                except Exception:
                    log.exception("could not send %s to the client", event.type)
        finally:
            for task in list(acp_session.asks.values()):
                task.cancel()
            acp_session.awaiting_reply = None  # the turn is over: nothing waits for a reply
            await self._close_open_calls(acp_session)
        return str(turn.status or "failed")

    async def _close_open_calls(self, acp_session: AcpSession) -> None:
        """The turn ended with calls that never ran (cancelled at their permission
        prompt): show them `failed`, as session/load replays them, not pending forever."""
        calls, acp_session.open_calls = acp_session.open_calls, []
        for call_id in calls:
            with contextlib.suppress(ConnectionError, BrokenPipeError):
                await self._client.session_update(
                    session_id=acp_session.session_id, update=updates.cancelled_call(call_id)
                )

    async def _send_event(self, acp_session: AcpSession, event: Any) -> None:
        update: Any = None
        root = acp_session.runtime.workspace.root
        if isinstance(event, MessageDelta):
            update = updates.agent_text(event.text)
        elif isinstance(event, ToolCall) and event.depth == 0:
            acp_session.open_calls.append(event.id)
            update = updates.tool_call_start(
                event.id,
                event.name,
                event.args,
                root,
                content=self._diff(acp_session, event.name, event.args),
            )
        elif isinstance(event, ToolResult) and event.depth == 0:
            if event.id in acp_session.open_calls:
                acp_session.open_calls.remove(event.id)
            update = updates.tool_call_result(event.id, event.status, event.content)
        elif isinstance(event, ApprovalRequested):
            self._start_ask(acp_session, event)
        elif isinstance(event, ApprovalResolved):
            task = acp_session.asks.pop(event.approval_id, None)
            if task is not None and not task.done():
                task.cancel()  # decided elsewhere (another front end) first
            call_id = acp_session.approval_calls.pop(event.approval_id, None)
            if call_id is not None and event.decision.startswith("approve"):
                update = updates.tool_call_progress(call_id, status="in_progress")
        elif isinstance(event, Todos):
            update = updates.plan_update(event.items)
        elif isinstance(event, Error):
            acp_session.last_error = event.message
            update = updates.agent_text(f"\n\n**Error:** {event.message}\n")
        if update is not None:
            await self._client.session_update(session_id=acp_session.session_id, update=update)

    def _diff(self, acp_session: AcpSession, name: str, args: dict[str, Any]) -> list[Any] | None:
        """`diff` content for a file edit, as the runtime would make it (None if it cannot)."""
        if name not in WRITES_FILES:
            return None
        from invincat_server.runtime.tools.preview import preview_change

        runtime = acp_session.runtime
        try:
            change = preview_change(runtime.workspace, runtime.documents, name, args)
        except Exception as exc:  # the tool itself reports why it cannot run
            log.debug("no diff for %s: %s", name, exc)
            return None
        if change is None:
            return None
        return [updates.diff_content(change.abs_path, change.old_text, change.new_text)]

    # approvals ----------------------------------------------------------------------
    def _start_ask(self, acp_session: AcpSession, request: ApprovalRequested) -> None:
        if request.tool_call_id and request.kind == "tool":
            acp_session.approval_calls[request.approval_id] = request.tool_call_id
        task = asyncio.create_task(self._ask(acp_session, request))
        acp_session.asks[request.approval_id] = task
        task.add_done_callback(lambda _: acp_session.asks.pop(request.approval_id, None))

    async def _ask(self, acp_session: AcpSession, request: ApprovalRequested) -> None:
        """Ask the client (one request at a time per session) and apply the answer."""
        async with acp_session.ask_lock:
            rule = next((r for r in acp_session.deny_rules if r.covers(request)), None)
            option_id: str | None = None
            if rule is None:
                try:
                    response = await self._client.request_permission(
                        session_id=acp_session.session_id,
                        tool_call=self._permission_subject(acp_session, request),
                        options=options_for(request),
                    )
                except ConnectionError:
                    return  # the client is gone: the approval stays pending for session/load
                except RequestError as exc:
                    log.info("the client answered the permission request with %s", exc)
                else:
                    outcome = response.outcome
                    if isinstance(outcome, AllowedOutcome):
                        option_id = outcome.option_id
            wants_text = (option_id == REFINE and request.kind == "plan") or (
                option_id == REPLY and request.kind == "question"
            )
            if wants_text:
                acp_session.awaiting_reply = request
                if acp_session.paused is not None and not acp_session.paused.done():
                    acp_session.paused.set_result(None)
                ask = (
                    "What should change in the plan?"
                    if request.kind == "plan"
                    else "Type your answer"
                )
                await self._client.session_update(
                    session_id=acp_session.session_id,
                    update=updates.agent_text(f"\n\n{ask} Send it as your next message.\n"),
                )
                return
            decision, new_rule = decision_for(request, option_id)
            if rule is not None:
                decision["message"] = "Rejected: the user rejected such calls for this session."
            if new_rule is not None:
                acp_session.deny_rules.append(new_rule)
            result = await acp_session.runtime.resolve(request.approval_id, decision)
            if not result.resolved:
                log.info("decision for %s not applied: %s", request.approval_id, result.reason)
            if result.turn is not None:
                # The process that asked is gone (session/load): this decision resumed it.
                acp_session.turn = result.turn
                acp_session.pump = self._later(self._follow(acp_session, result.turn))

    def _permission_subject(
        self, acp_session: AcpSession, request: ApprovalRequested
    ) -> ToolCallUpdate:
        root = acp_session.runtime.workspace.root
        args = request.args or {}
        kind: ToolKind
        content: list[Any] | None
        if request.kind == "plan":
            title = "Approve this plan?"
            content = [updates.plan_text(request.todos or [])]
            kind = "think"
        elif request.kind == "question":
            questions = request.questions or []
            title = "; ".join(str(q.get("question", "")) for q in questions) or "A question"
            content, kind = None, "other"
        else:
            name = request.tool_name or ""
            title = updates.tool_title(name, args)
            kind = updates.TOOL_KINDS.get(name, "other")
            content = self._diff(acp_session, name, args)
            if content is None and request.description:
                content = [updates.text_content(request.description)]
        return ToolCallUpdate(
            tool_call_id=request.tool_call_id or request.approval_id,
            title=title,
            kind=kind,
            status="pending",
            content=content,
            locations=updates.tool_locations(root, args),
            raw_input=args or None,
        )

    async def _ask_pending(self, acp_session: AcpSession) -> None:
        """After session/load: ask again the approvals a dead process left pending."""
        for request in await acp_session.runtime.pending_approvals(acp_session.session_id):
            self._start_ask(acp_session, request)

    # commands -----------------------------------------------------------------------
    async def _offload(self, acp_session: AcpSession) -> PromptResponse:
        if not acp_session.has_thread:
            return await self._say(acp_session, "Nothing to offload yet.")
        try:
            report = await acp_session.runtime.offload(acp_session.session_id)
        except SessionError as exc:
            raise rpc_error(str(exc)) from None
        if not report["offloadedMessages"]:
            return await self._say(acp_session, "Nothing to offload: the thread is short.")
        return await self._say(
            acp_session,
            f"Offloaded {report['offloadedMessages']} messages to {report['file']} "
            f"({report['tokensBefore']} → {report['tokensAfter']} tokens).",
        )

    async def _memory_summary(self, acp_session: AcpSession) -> PromptResponse:
        from invincat_server.acp.memory import summary

        return await self._say(acp_session, await asyncio.to_thread(summary, acp_session.runtime))

    async def _say(self, acp_session: AcpSession, message: str) -> PromptResponse:
        await self._client.session_update(
            session_id=acp_session.session_id, update=updates.agent_text(message)
        )
        return PromptResponse(stop_reason="end_turn")

    # extension methods --------------------------------------------------------------
    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from invincat_server.acp.memory import MEMORY_METHODS, call_memory_method

        if method not in MEMORY_METHODS:
            raise RequestError.method_not_found(f"_{method}")
        acp_session = self._require(str(params.get("sessionId") or ""))
        result, changes = await asyncio.to_thread(
            call_memory_method, acp_session.runtime, method, params
        )
        for scope, batch_ids in changes:
            await self._memory_changed(acp_session, scope, batch_ids)
        return result

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.debug("ignored extension notification _%s", method)

    # helpers ------------------------------------------------------------------------
    async def _open(self, session_id: str, cwd: str, mcp_servers: Any) -> AcpSession:
        from invincat_server.runtime.config import ConfigError, find_project_root, load_settings

        folder = Path(cwd)
        if not folder.is_absolute() or not folder.is_dir():
            raise rpc_error(f"cwd must be an absolute path to a directory, got {cwd!r}.", -32602)
        try:
            settings = load_settings()
        except ConfigError as exc:
            raise rpc_error(str(exc)) from None
        # LangChain takes seconds to import: do it off the event loop.
        await asyncio.to_thread(importlib.import_module, "invincat_server.runtime.session")
        from invincat_server.runtime.policy.workspace import Workspace
        from invincat_server.runtime.session import Session

        documents = ClientDocuments(
            self._transport,
            self._client,
            session_id,
            can_read=self._can_read,
            can_write=self._can_write,
        )
        runtime = Session(
            settings,
            Workspace(find_project_root(folder)),
            documents=documents,
            options={"client_mcp_servers": client_servers(mcp_servers)},
        )
        try:
            await runtime.open()
        except ConfigError as exc:
            await runtime.close()
            raise rpc_error(str(exc)) from None
        acp_session = AcpSession(session_id=session_id, runtime=runtime)
        runtime.add_listener(lambda turn, event: self._on_runtime_event(acp_session, event))
        self._sessions[session_id] = acp_session
        return acp_session

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

    def _require(self, session_id: str) -> AcpSession:
        acp_session = self._sessions.get(session_id)
        if acp_session is None:
            raise rpc_error(
                f"Unknown session {session_id!r}; create one with session/new or load it "
                "with session/load first.",
                -32602,
            )
        return acp_session

    async def _announce(self, acp_session: AcpSession) -> None:
        commands = [
            AvailableCommand(
                name=name,
                description=description,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))
                if hint
                else None,
            )
            for name, (description, hint) in COMMANDS.items()
        ]
        await self._client.session_update(
            session_id=acp_session.session_id,
            update=AvailableCommandsUpdate(
                session_update="available_commands_update", available_commands=commands
            ),
        )

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
