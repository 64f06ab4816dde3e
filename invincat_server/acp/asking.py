"""Approvals asked with `session/request_permission`, one at a time per session, and
resolved through `Session.resolve`, where the first decision from any front end wins
(what each option means: permissions.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    ToolCallUpdate,
    ToolKind,
)

from invincat_server.acp import updates
from invincat_server.acp.base import AcpSession, AgentBase, log
from invincat_server.acp.permissions import (
    REFINE,
    REPLY,
    decision_for,
    options_for,
)
from invincat_server.runtime.events import (
    ApprovalRequested,
)


class Asking(AgentBase):
    def _start_ask(self, acp_session: AcpSession, request: ApprovalRequested) -> None:
        if request.tool_call_id and request.kind == "tool":
            acp_session.approval_calls[request.approval_id] = request.tool_call_id
        task = asyncio.create_task(self._ask(acp_session, request))
        acp_session.asks[request.approval_id] = task
        task.add_done_callback(lambda _: acp_session.asks.pop(request.approval_id, None))

    async def _ask(self, acp_session: AcpSession, request: ApprovalRequested) -> None:
        """Ask the client (one request at a time per session) and apply the answer."""
        async with acp_session.ask_lock:
            if not await acp_session.runtime.is_pending(request.approval_id):
                # Answered while it waited for its turn to be asked (a 'reject always' of
                # its batch covered it, or another front end): no permission request.
                return
            option_id: str | None = None
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
            decision = decision_for(request, option_id)
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
            title, kind = request.words.title, request.words.kind  # worded by the core
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
