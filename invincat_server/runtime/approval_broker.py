"""The approval broker: pending approvals, their decisions, and first decision wins.

A turn that stops at an approval interrupt registers each request here and waits on a
future; `resolve` checks a decision, claims the approval in the records (so only the
first decision, from any process, wins) and hands it to the waiting turn. When no turn
of this process waits (the one that asked was restarted), `resolve` returns a `Resume`
once the whole batch is decided, and the Session starts a turn that resumes it.

A `reject_always` answer also answers, as rejected, the batch's other pending approvals
its deny rule covers (`policy/deny_rules.py`): nobody is asked again, in any front end,
for what the user just denied. They are claimed before any decision is handed to the
turn, so a front end that drops its prompt on `approval_resolved` never sees one of them
still pending.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from invincat_server.runtime.events import ApprovalRequested, ApprovalResolved
from invincat_server.runtime.policy import decisions, deny_rules
from invincat_server.runtime.policy.decisions import Decision, DecisionError
from invincat_server.runtime.records import ApprovalRecord
from invincat_server.runtime.thread_store import ThreadRecords
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
    resolved: list[ApprovalResolved]
    """The decisions this resolve took (one, or a 'reject always' and what it covered)."""


class ApprovalBroker:
    """Pending approvals of live turns, and the one path a decision takes."""

    def __init__(self, records: ThreadRecords) -> None:
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
        answered = [(record, parsed)]
        if parsed.type == "reject_always":
            answered += await self._claim_covered(record)
        # Every claim is made before the first hand-over: nothing awaits in between.
        events = [_resolved_event(r, d) for r, d in answered]
        live = [self._hand_over(e, d) for e, (_, d) in zip(events, answered, strict=True)]
        if live[0]:
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
            resolved=events,
        )

    def _hand_over(self, event: ApprovalResolved, decision: Decision) -> bool:
        """Give a claimed decision to the live turn waiting for it; False when none waits."""
        live = self._waiting.pop(event.approval_id, None)
        if live is None:
            return False
        turn, future = live
        turn.emit(event)
        if not future.done():
            future.set_result(decision.model_dump(exclude_none=True))
        return True

    async def _claim_covered(self, record: ApprovalRecord) -> list[tuple[ApprovalRecord, Decision]]:
        """Claim, as rejected by the rule, the pending approvals of `record`'s batch that
        the deny rule its `reject_always` leaves covers. One another process claimed first
        keeps that decision."""
        rule = deny_rules.rule_for(ApprovalRequested.model_validate(record.request))
        if rule is None:
            return []
        denial = decisions.denied_by_rule()
        claimed = []
        for other in await self.records.batch(record.batch_id):
            if other.approval_id == record.approval_id or other.status != "pending":
                continue
            try:
                request = ApprovalRequested.model_validate(other.request)
            except ValidationError:
                continue  # a damaged record is asked (and refused) on its own
            if not rule.covers(request):
                continue
            if await self.records.claim(other.approval_id, denial.model_dump(exclude_none=True)):
                claimed.append((other, denial))
        return claimed

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


def _resolved_event(record: ApprovalRecord, decision: Decision) -> ApprovalResolved:
    return ApprovalResolved(
        approval_id=record.approval_id,
        decision=decision.describe(),
        remembered=_remembered_label(record, decision),
    )


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
