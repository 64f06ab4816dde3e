"""Approval decisions: the one typed form every front end builds (issue #27).

`Decision` is what `Session.resolve` takes; the constructors below are how the terminal,
the language server and ACP build one, so a choice means the same thing everywhere:

- `approve()` once, `approve_always(scope)` ("session" or "workspace" rule),
- `reject(message)`, `reject_always()` (reject, and reject what the same rule would
  cover for the rest of this session: `policy/deny_rules.py`), `denied_by_rule()` (the
  answer given for a call such a rule covers, without asking),
- `edit(args)`, `refine(feedback)` for a plan, `answer(answers)` for a question, and
  `reply(request, text)` when the text of a plan's refinement or a question's answers
  came as a separate message (ACP's next prompt).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError, model_validator

if TYPE_CHECKING:
    from invincat_server.runtime.events import ApprovalRequested


class DecisionError(ValueError):
    """A decision that cannot be applied; the message says what is wrong."""


DECISIONS_BY_KIND = {
    "tool": frozenset({"approve", "approve_always", "reject", "reject_always", "edit"}),
    "plan": frozenset({"approve", "reject", "refine"}),
    # reject cancels the question: the agent is told "(cancelled)".
    "question": frozenset({"answer", "reject"}),
}

DecisionType = Literal[
    "approve", "approve_always", "reject", "reject_always", "edit", "refine", "answer"
]


class Decision(BaseModel):
    """A person's answer to one approval request."""

    type: DecisionType
    scope: Literal["session", "workspace"] | None = None
    message: str | None = None
    edited_args: dict[str, Any] | None = None
    feedback: str | None = None
    """For `refine` of a plan: what to change."""
    answers: list[str] | None = None
    """For `answer` of a question request: one answer per question, in order."""

    @model_validator(mode="after")
    def _check_fields(self) -> Decision:
        if self.type == "approve_always" and self.scope is None:
            raise ValueError("approve_always needs scope: 'session' or 'workspace'")
        if self.type == "reject_always" and self.scope not in (None, "session"):
            # Deny rules live in this process only: there is no persisted one to ask for.
            raise ValueError("reject_always is for this session only: omit scope or use 'session'")
        if self.type == "edit" and self.edited_args is None:
            raise ValueError("edit needs edited_args: the full argument object to run instead")
        if self.type == "refine" and not (self.feedback or "").strip():
            raise ValueError("refine needs feedback: what the planner should change")
        if self.type == "answer" and self.answers is None:
            raise ValueError("answer needs answers: a list with one answer per question")
        return self

    @classmethod
    def parse(cls, data: object) -> Decision:
        """A decision from a client's JSON object; `DecisionError` says what is wrong."""
        if not isinstance(data, dict):
            raise DecisionError("Invalid decision: a decision must be a JSON object")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(err["msg"] for err in exc.errors())
            raise DecisionError(f"Invalid decision: {problems}") from exc

    def allowed_for(self, kind: str) -> str | None:
        """None if this decision fits a request of `kind`, else why not."""
        allowed = DECISIONS_BY_KIND.get(kind, DECISIONS_BY_KIND["tool"])
        if self.type in allowed:
            return None
        return f"Decision {self.type!r} does not apply to a {kind} request; use one of: " + (
            ", ".join(sorted(allowed))
        )

    def describe(self) -> str:
        if self.type == "approve_always":
            return f"approve_always ({self.scope})"
        if self.type == "reject_always":
            return "reject_always (session)"
        return self.type

    @property
    def rejects(self) -> bool:
        """The call does not run (a plain or an 'always' rejection)."""
        return self.type in ("reject", "reject_always")


def approve() -> Decision:
    return Decision(type="approve")


def approve_always(scope: Literal["session", "workspace"]) -> Decision:
    return Decision(type="approve_always", scope=scope)


def reject(message: str | None = None) -> Decision:
    """`message` (optional) is passed to the model with the rejection."""
    return Decision(type="reject", message=message or None)


def reject_always(message: str | None = None) -> Decision:
    """Reject, and remember a session deny rule for what the request's rule would cover."""
    return Decision(type="reject_always", scope="session", message=message or None)


def denied_by_rule() -> Decision:
    """The answer for a call a session deny rule covers: rejected without asking."""
    return reject("Rejected: the user rejected such calls for this session.")


def edit(args: dict[str, Any]) -> Decision:
    """Run the call with `args` (the full argument object) instead."""
    return Decision(type="edit", edited_args=args)


def refine(feedback: str) -> Decision:
    return Decision(type="refine", feedback=feedback)


def answer(answers: list[str]) -> Decision:
    return Decision(type="answer", answers=answers)


def headless(request: ApprovalRequested) -> Decision:
    """`--yes`: approve; a question gets one 'no answer' per question."""
    if request.kind == "question":
        return answer(["(no answer: headless)"] * len(request.questions or []))
    return approve()


def reply(request: ApprovalRequested, text: str) -> Decision:
    """The decision for a plan or question whose text came as a message of its own: the
    plan's refinement, or the answers (one line per question when there are several)."""
    text = text.strip() or "(no details given)"
    if request.kind == "plan":
        return refine(text)
    count = max(1, len(request.questions or []))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return answer([text] if count == 1 else (lines + ["(no answer)"] * count)[:count])
