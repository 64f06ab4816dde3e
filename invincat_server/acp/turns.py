"""Prompts and turns: `session/prompt`, `session/cancel`, and the running turn's events
sent as `session/update` notifications.

`session/prompt` answers when the turn ends, with the stop reason — or at once when the
user chose to answer a plan (Refine) or a question in text: the turn then waits and the
next prompt is that text.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from acp.schema import (
    PromptResponse,
    StopReason,
)

from invincat_server.acp import rules, updates
from invincat_server.acp.base import AcpSession, AgentBase, log, rpc_error
from invincat_server.acp.commands import COMMANDS
from invincat_server.acp.prompt import Prompt, find_command, read_prompt
from invincat_server.acp.rewind import BUSY
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
from invincat_server.runtime.policy import decisions

STOP_REASONS: dict[str, StopReason] = {"completed": "end_turn", "cancelled": "cancelled"}


class Turns(AgentBase):
    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        acp_session = self._require(session_id)
        blocks = read_prompt(prompt, acp_session.runtime.workspace)
        if acp_session.awaiting_reply is not None:
            if find_command(Prompt(list(blocks.texts)), ("rewind",))[0] is not None:
                # Not the reply the paused turn waits for: a rewind while a turn runs.
                return await self._say(acp_session, BUSY)
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
        if command == "rewind":
            return await self._rewind(acp_session, rest)
        if command == "rules":
            answer = rules.rules_text(acp_session.runtime.policy, rest)
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
            turn = await runtime.start_turn(
                text,
                session_id,
                mode=mode,
                context=blocks.context,
                documents=acp_session.documents,
            )
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
            request.approval_id, decisions.reply(request, text)
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
                event.words.title,
                event.words.kind,
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
