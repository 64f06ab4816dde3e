"""The approval broker: pending approvals, their decisions, and first decision wins.

A turn that stops at an approval interrupt registers each request here and waits on a
future; `resolve` checks a decision, claims the approval in the records (so only the
first decision, from any process, wins) and hands it to the waiting turn. When no turn
of this process waits (the one that asked was restarted), `resolve` returns a `Resume`
once the whole batch is decided, and the Session starts a turn that resumes it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.events import ApprovalRequested, ApprovalResolved
from invincat_server.runtime.policy import deny_rules
from invincat_server.runtime.policy.decisions import Decision, DecisionError
from invincat_server.runtime.records import ApprovalRecord, Records
from invincat_server.runtime.tool_traits import WRITES_FILES

if TYPE_CHECKING:
    from invincat_server.runtime.turn import Turn


class ResolveResult:
    """Outcome of `Session.resolve`: whether this decision won, and a resumed turn if any."""

    def __init__(self, resolved: bool, reason: str | None = None, turn: Turn | None = None):
        self.resolved = resolved
        self.reason = reason
        self.turn = turn

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"resolved": self.resolved}
        if self.reason:
            out["reason"] = self.reason
        if self.turn is not None:
            out["threadId"] = self.turn.thread_id
            out["turnId"] = self.turn.turn_id
        return out


@dataclass
class Resume:
    """A batch decided with no live turn waiting: resume `agent` on `thread_id`."""

    thread_id: str
    agent: str
    batch_id: str
    decisions: dict[str, Any]
    resolved: ApprovalResolved


class ApprovalBroker:
    """Pending approvals of live turns, and the one path a decision takes."""

    def __init__(self, records: Records) -> None:
        self.records = records
        self._waiting: dict[str, tuple[Turn, asyncio.Future[dict[str, Any]]]] = {}

    async def register(self, request: ApprovalRequested, batch_id: str) -> ApprovalRecord | None:
        """Record `request` as pending (a no-op if known); its record, with any decision."""
        await self.records.add_approval(
            request.approval_id, request.thread_id, batch_id, request.to_json_dict()
        )
        return await self.records.approval(request.approval_id)

    def await_decision(
        self, turn: Turn, request: ApprovalRequested
    ) -> asyncio.Future[dict[str, Any]]:
        """A future `turn` awaits; `resolve` sets it to the decision."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request.approval_id] = (turn, future)
        return future

    def forget(self, turn: Turn) -> None:
        """`turn` ended: it waits for nothing any more."""
        for approval_id, (owner, future) in list(self._waiting.items()):
            if owner is turn:
                del self._waiting[approval_id]
                future.cancel()

    async def resolve(
        self, approval_id: str, decision: dict[str, Any] | Decision
    ) -> ResolveResult | Resume:
        """Apply a decision: the first one for an approval wins."""
        records = self.records
        try:
            parsed = decision if isinstance(decision, Decision) else Decision.parse(decision)
        except DecisionError as exc:
            return ResolveResult(False, str(exc))
        record = await records.approval(approval_id)
        if record is None:
            return ResolveResult(False, f"Unknown approval {approval_id!r}.")
        if record.status != "pending":
            return ResolveResult(False, f"Approval {approval_id} was already {record.status}.")
        error = _invalid(record, parsed)
        if error:
            return ResolveResult(False, error)
        payload = parsed.model_dump(exclude_none=True)
        if not await records.claim(approval_id, payload):
            return ResolveResult(False, f"Approval {approval_id} was already resolved elsewhere.")
        resolved = ApprovalResolved(
            approval_id=approval_id,
            decision=parsed.describe(),
            remembered=_remembered_label(record, parsed),
        )
        live = self._waiting.pop(approval_id, None)
        if live is not None:
            turn, future = live
            turn.emit(resolved)
            if not future.done():
                future.set_result(payload)
            return ResolveResult(True)
        # No live turn waits (the process that asked was restarted): resume the thread once
        # the whole batch is decided.
        batch = await records.batch(record.batch_id)
        if any(r.status == "pending" for r in batch):
            return ResolveResult(True)
        if any(r.status != "resolved" for r in batch):
            return ResolveResult(True, "The turn that asked was cancelled; nothing to resume.")
        return Resume(
            thread_id=record.thread_id,
            agent=str(record.request.get("agent") or "main"),
            batch_id=record.batch_id,
            decisions={r.request["tool_call_id"]: r.decision for r in batch},
            resolved=resolved,
        )

    async def adopt(self, thread_id: str, interrupts: list[Any]) -> None:
        """Re-register the requests of checkpointed `interrupts` (e.g. written just before
        a crash) so they are listed and can be resolved."""
        for item in interrupts:
            value = item.value if isinstance(item.value, dict) else {}
            for request in value.get("requests", []):
                parsed = ApprovalRequested.model_validate(request)
                await self.records.add_approval(
                    parsed.approval_id, thread_id, str(value.get("batch_id")), parsed.to_json_dict()
                )


def _invalid(record: ApprovalRecord, decision: Decision) -> str | None:
    mismatch = decision.allowed_for(str(record.request.get("kind") or "tool"))
    if mismatch:
        return mismatch
    if decision.type == "edit":
        tool = record.request.get("tool_name")
        if not isinstance(decision.edited_args, dict):
            return "edit needs edited_args as an object."
        if tool in WRITES_FILES and "path" not in decision.edited_args:
            return f"edited_args for {tool} must include path."
    return None


def _remembered_label(record: ApprovalRecord, decision: Decision) -> str | None:
    if decision.type == "reject_always":
        option = deny_rules.offer(ApprovalRequested.model_validate(record.request))
        return option.label if option is not None else None
    if decision.type != "approve_always":
        return None
    for option in record.request.get("always_options", []):
        if option.get("scope") == decision.scope:
            return str(option.get("label"))
    return None
