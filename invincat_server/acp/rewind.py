"""The `/rewind` slash command (docs/acp.md, docs/rewind.md): the session's turns, and going
back to before one of them — files, conversation or both — after asking.

`/rewind` lists the turns (no model call). `/rewind N [code|conversation|both]` shows the
plan (a diff per file) as agent text and asks with `session/request_permission` (rewind
or cancel); a file changed since Invincat wrote it is then asked about by name (overwrite
it or keep it; no answer keeps it). The work is the core's: `Rewinder` (checkpoints,
plan_to, restore) and `Session.rewind_conversation`; the words are rewind_text.py's.
A session with a turn running or an approval waiting is refused, and so are bad
arguments: nothing changes.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    PromptResponse,
    ToolCallStart,
    ToolCallUpdate,
    ToolKind,
)

from invincat_server.acp import rewind_text as words
from invincat_server.acp import updates
from invincat_server.acp.base import AcpSession, AgentBase, log
from invincat_server.runtime.errors import SessionError

if TYPE_CHECKING:
    from invincat_server.runtime.checkpoints.planning import RewindPlan
    from invincat_server.runtime.checkpoints.rewind import Rewinder

REWIND, CANCEL = "rewind", "cancel"
KEEP, OVERWRITE = "keep", "overwrite"
BUSY = "A turn is still running in this session; wait for it or cancel it, then rewind."
WAITING = (
    "This session has an approval waiting; answer it (or let its turn end) before "
    "rewinding. Nothing was changed."
)


class Rewinding(AgentBase):
    async def _rewind(self, acp_session: AcpSession, arg: str) -> PromptResponse:
        try:
            request = words.parse(arg)
        except words.BadArguments as exc:
            return await self._say(acp_session, str(exc))
        if not acp_session.has_thread:
            return await self._say(acp_session, words.NO_TURNS)
        from invincat_server.runtime.checkpoints.store import CheckpointError

        runtime, thread_id = acp_session.runtime, acp_session.session_id
        if await runtime.pending_approvals(thread_id):
            return await self._say(acp_session, WAITING)
        rewinder = runtime.rewinder()  # knows this session's running turns (ensure_quiet)
        try:
            found = await asyncio.to_thread(rewinder.checkpoints, thread_id)
        except (CheckpointError, SessionError) as exc:
            return await self._say(acp_session, str(exc))
        if request is None:
            return await self._say(acp_session, words.turns_text(found))
        if not 1 <= request.to_turn <= len(found.turns):
            return await self._say(acp_session, words.out_of_range(len(found.turns)))
        code = request.scope != "conversation"
        try:
            plan = await self._rewind_plan(rewinder, thread_id, request.to_turn) if code else None
        except CheckpointError as exc:
            return await self._say(acp_session, str(exc))
        if plan is not None and not plan.files and request.scope == "code":
            return await self._say(acp_session, words.what_changes(request, plan))
        await self._client.session_update(
            session_id=acp_session.session_id,
            update=updates.agent_text(words.what_changes(request, plan) + "\n\n"),
        )
        return await self._carry_out(acp_session, rewinder, request, plan)

    async def _carry_out(
        self,
        acp_session: AcpSession,
        rewinder: Rewinder,
        request: words.RewindRequest,
        plan: RewindPlan | None,
    ) -> PromptResponse:
        """Ask (rewind or cancel), then each changed-by-hand file by name; then restore."""
        from invincat_server.runtime.checkpoints.store import CheckpointError

        runtime, thread_id = acp_session.runtime, acp_session.session_id
        code = plan is not None
        call_id = f"rewind_{secrets.token_hex(6)}"
        title = f"Rewind to before turn {request.to_turn} ({request.scope})"
        options = [
            PermissionOption(
                option_id=REWIND, name=words.rewind_option(request, plan), kind="allow_once"
            ),
            PermissionOption(option_id=CANCEL, name="Cancel: change nothing", kind="reject_once"),
        ]
        kind: ToolKind = "edit" if code else "other"
        if await self._ask_rewind(acp_session, call_id, title, kind, options) != REWIND:
            await self._close_call(acp_session, call_id, "failed")
            return await self._say(acp_session, words.NOT_REWOUND)
        if acp_session.turn is not None and not acp_session.turn.done:
            await self._close_call(acp_session, call_id, "failed")  # a prompt came in meanwhile
            return await self._say(acp_session, BUSY)
        result = None
        if code:
            # Planned again: a file changed while the user read the plan is still asked.
            try:
                plan = await self._rewind_plan(rewinder, thread_id, request.to_turn)
            except CheckpointError as exc:
                await self._close_call(acp_session, call_id, "failed")
                return await self._say(acp_session, str(exc))
            if plan.files:
                confirmed = await self._confirm_overwrites(acp_session, plan)
                try:
                    result = await asyncio.to_thread(rewinder.restore, plan, confirmed)
                except SessionError as exc:  # busy meanwhile (ThreadBusyError): nothing changed
                    await self._close_call(acp_session, call_id, "failed")
                    return await self._say(acp_session, str(exc))
        removed, refused = None, None
        if request.scope != "code":
            try:
                removed = await runtime.rewind_conversation(thread_id, request.to_turn)
            except SessionError as exc:
                refused = str(exc)
        failed = refused is not None or bool(result and result.failed)
        await self._close_call(acp_session, call_id, "failed" if failed else "completed")
        return await self._say(acp_session, words.result_text(thread_id, result, removed, refused))

    @staticmethod
    async def _rewind_plan(rewinder: Rewinder, thread_id: str, to_turn: int) -> RewindPlan:
        return await asyncio.to_thread(rewinder.plan_to, thread_id, to_turn)

    async def _confirm_overwrites(self, acp_session: AcpSession, plan: RewindPlan) -> set[str]:
        """Each file changed since Invincat wrote it, asked about by name: only an explicit
        "Overwrite PATH" restores it (cancelled or no answer: kept)."""
        confirmed: set[str] = set()
        for path in plan.conflicts:
            call_id = f"rewind_{secrets.token_hex(6)}"
            options = [
                PermissionOption(option_id=OVERWRITE, name=f"Overwrite {path}", kind="allow_once"),
                PermissionOption(option_id=KEEP, name=f"Keep {path} as it is", kind="reject_once"),
            ]
            title = f"{path} changed since Invincat wrote it: overwrite it?"
            chosen = await self._ask_rewind(acp_session, call_id, title, "edit", options, path=path)
            if chosen == OVERWRITE:
                confirmed.add(path)
            await self._close_call(acp_session, call_id, "completed")
        return confirmed

    async def _ask_rewind(
        self,
        acp_session: AcpSession,
        call_id: str,
        title: str,
        kind: ToolKind,
        options: list[PermissionOption],
        path: str | None = None,
    ) -> str | None:
        """Show the question as a pending tool call and ask; the chosen option's id (None:
        cancelled, refused or no client)."""
        root = acp_session.runtime.workspace.root
        args: dict[str, Any] = {"path": path} if path else {}
        locations = updates.tool_locations(root, args)
        start = ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=title,
            kind=kind,
            status="pending",
            locations=locations,
        )
        await self._client.session_update(session_id=acp_session.session_id, update=start)
        subject = ToolCallUpdate(
            tool_call_id=call_id, title=title, kind=kind, status="pending", locations=locations
        )
        try:
            response = await self._client.request_permission(
                session_id=acp_session.session_id, tool_call=subject, options=options
            )
        except (ConnectionError, RequestError) as exc:
            log.info("the rewind question was not answered: %s", exc)
            return None
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else None

    async def _close_call(self, acp_session: AcpSession, call_id: str, status: str) -> None:
        await self._client.session_update(
            session_id=acp_session.session_id,
            update=updates.tool_call_progress(call_id, status=status),
        )
