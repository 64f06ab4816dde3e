"""Approvals as `session/request_permission`: the options offered and what each one means.

- allow once → approve this call.
- allow always → the runtime's *workspace* rule, labelled with exactly what is remembered
  (e.g. "Allow shell commands starting with `pytest` in /repo, remembered across sessions").
- reject once → reject this call.
- reject always → reject this call and, for the rest of this session, reject further
  calls the same rule would cover without asking: the core's `reject_always` decision and
  session deny rule (runtime/policy/deny_rules.py, worded there; never persisted).

Decisions are built with the core's constructors (runtime/policy/decisions.py), as the
terminal and the language server build theirs.

A plan is offered approve (`allow_once`), refine (`reject_once`: not this version, the next
prompt says what to change) and reject (`reject_always`: no plan at all), so each kind
appears once and a client that shows only the kind still shows three different choices.

A cancelled request (the client's `cancelled` outcome, `session/cancel`, or no answer) is a
rejection, never an approval.
"""

from __future__ import annotations

from acp.schema import PermissionOption

from invincat_server.runtime.events import ApprovalRequested
from invincat_server.runtime.policy import decisions, deny_rules
from invincat_server.runtime.policy.decisions import Decision

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT_ONCE = "reject_once"
REJECT_ALWAYS = "reject_always"
REFINE = "refine"
REPLY = "reply"
"""For a plan (refine) or a question (answer): the user's next prompt is the text."""


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
    option = next((o for o in request.always_options if o.scope == "workspace"), None)
    if option is not None:
        options.append(
            PermissionOption(option_id=ALLOW_ALWAYS, name=option.label, kind="allow_always")
        )
    options.append(PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"))
    deny = deny_rules.offer(request)
    if deny is not None:
        options.append(
            PermissionOption(option_id=REJECT_ALWAYS, name=deny.label, kind="reject_always")
        )
    return options


def decision_for(request: ApprovalRequested, option_id: str | None) -> Decision:
    """The runtime decision for the chosen option (None: cancelled; never an approval)."""
    if option_id == ALLOW_ONCE:
        return decisions.approve()
    if option_id == ALLOW_ALWAYS and request.kind == "tool":
        return decisions.approve_always("workspace")
    if option_id and option_id.startswith("answer:") and request.kind == "question":
        questions = request.questions or []
        choices = (questions[0].get("options") or []) if len(questions) == 1 else []
        index = option_id.removeprefix("answer:")
        if index.isdigit() and int(index) < len(choices):
            return decisions.answer([str(choices[int(index)])])
    if option_id == REJECT_ALWAYS and request.kind == "tool":
        return decisions.reject_always("Rejected (and rejected for the rest of this session).")
    if option_id in (REJECT_ONCE, REJECT_ALWAYS):
        return decisions.reject("Rejected by the user.")
    # cancelled, unknown or missing option: never an approval
    return decisions.reject("The permission request was cancelled; treated as a rejection.")
