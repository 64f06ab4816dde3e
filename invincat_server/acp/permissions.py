"""Approvals as `session/request_permission`: the options offered and what each one means.

- allow once → approve this call.
- allow always → the runtime's *workspace* rule, labelled with exactly what is remembered
  (e.g. "Allow shell commands starting with `pytest` in /repo, remembered across sessions").
- reject once → reject this call.
- reject always → reject this call and, for the rest of this ACP session, reject further
  calls the same rule would cover without asking (the runtime has no persisted deny rules;
  the label says "for the rest of this session").

A plan is offered approve (`allow_once`), refine (`reject_once`: not this version, the next
prompt says what to change) and reject (`reject_always`: no plan at all), so each kind
appears once and a client that shows only the kind still shows three different choices.

A cancelled request (the client's `cancelled` outcome, `session/cancel`, or no answer) is a
rejection, never an approval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from acp.schema import PermissionOption

from invincat_server.runtime.events import ApprovalRequested

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
REJECT_ALWAYS = "reject_always"
REFINE = "refine"
REPLY = "reply"
"""For a plan (refine) or a question (answer): the user's next prompt is the text."""


@dataclass(frozen=True)
class DenyRule:
    """A 'reject always' answer, remembered by this ACP session only."""

    tool: str
    command_prefix: str | None
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(), compare=False)
    """When it was answered: part of its id in `/rules` (acp/rules.py)."""

    def covers(self, request: ApprovalRequested) -> bool:
        if request.kind != "tool":
            return False
        option = _workspace_option(request)
        if option is None:
            return request.tool_name == self.tool and self.command_prefix is None
        return (option.tool, option.command_prefix) == (self.tool, self.command_prefix)


def _workspace_option(request: ApprovalRequested) -> Any:
    return next((o for o in request.always_options if o.scope == "workspace"), None)


def _rule_words(request: ApprovalRequested) -> str:
    option = _workspace_option(request)
    if option is None:
        # What DenyRule.covers then matches: later calls of the tool with no option either
        # (`rm`, chains, paths outside), not the ones an 'always' rule could cover.
        return f"`{request.tool_name}` calls offered no 'always' rule"
    if option.command_prefix is not None:
        return f"shell commands starting with `{option.command_prefix}`"
    if option.tool == "file_writes":
        return "file writes and edits"
    return f"`{option.tool}` calls"


def options_for(request: ApprovalRequested) -> list[PermissionOption]:
    """The choices shown for one approval request."""
    if request.kind == "plan":
        return [
            PermissionOption(option_id=ALLOW_ONCE, name="Approve the plan", kind="allow_once"),
            # Kinds differ so a client that labels options by kind alone still tells them
            # apart: Refine rejects this version once (a revised plan is asked next),
            # Reject drops the plan for good (no rule is remembered for plans).
            PermissionOption(
                option_id=REFINE,
                name="Refine: send what to change as your next message",
                kind="reject_once",
            ),
            PermissionOption(option_id=REJECT_ALWAYS, name="Reject the plan", kind="reject_always"),
        ]
    if request.kind == "question":
        questions = request.questions or []
        choices = (questions[0].get("options") or []) if len(questions) == 1 else []
        options = [
            PermissionOption(option_id=f"answer:{i}", name=str(choice), kind="allow_once")
            for i, choice in enumerate(choices)
        ]
        reply = "Answer in my next message" + (
            " (one line per question)" if len(questions) > 1 else ""
        )
        options += [
            PermissionOption(option_id=REPLY, name=reply, kind="allow_once"),
            PermissionOption(option_id=REJECT_ONCE, name="Do not answer", kind="reject_once"),
        ]
        return options
    options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
    option = _workspace_option(request)
    if option is not None:
        options.append(
            PermissionOption(option_id=ALLOW_ALWAYS, name=option.label, kind="allow_always")
        )
    options += [
        PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
        PermissionOption(
            option_id=REJECT_ALWAYS,
            name=f"Reject, and reject {_rule_words(request)} for the rest of this session",
            kind="reject_always",
        ),
    ]
    return options


def decision_for(
    request: ApprovalRequested, option_id: str | None
) -> tuple[dict[str, Any], DenyRule | None]:
    """The runtime decision for the chosen option (None: cancelled), plus a deny rule to
    remember when the answer was 'reject always'."""
    if option_id == ALLOW_ONCE:
        return {"type": "approve"}, None
    if option_id == ALLOW_ALWAYS and request.kind == "tool":
        return {"type": "approve_always", "scope": "workspace"}, None
    if option_id and option_id.startswith("answer:") and request.kind == "question":
        questions = request.questions or []
        choices = (questions[0].get("options") or []) if len(questions) == 1 else []
        index = option_id.removeprefix("answer:")
        if index.isdigit() and int(index) < len(choices):
            return {"type": "answer", "answers": [str(choices[int(index)])]}, None
    if option_id == REJECT_ALWAYS and request.kind == "tool":
        option = _workspace_option(request)
        rule = (
            DenyRule(option.tool, option.command_prefix)
            if option is not None
            else DenyRule(str(request.tool_name), None)
        )
        return _reject("Rejected (and rejected for the rest of this session)."), rule
    if option_id in (REJECT_ONCE, REJECT_ALWAYS):
        return _reject("Rejected by the user."), None
    # cancelled, unknown or missing option: never an approval
    return _reject("The permission request was cancelled; treated as a rejection."), None


def reply_decision(request: ApprovalRequested, text: str) -> dict[str, Any]:
    """The decision for a plan or question whose text came as the next prompt: the plan's
    refinement, or the answers (one line per question when there are several)."""
    text = text.strip() or "(no details given)"
    if request.kind == "plan":
        return {"type": "refine", "feedback": text}
    count = max(1, len(request.questions or []))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    answers = [text] if count == 1 else (lines + ["(no answer)"] * count)[:count]
    return {"type": "answer", "answers": answers}


def _reject(message: str) -> dict[str, Any]:
    return {"type": "reject", "message": message}
