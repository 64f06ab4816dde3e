"""How a tool call ended: `success`, `error` or `rejected`, decided where it is decided.

A ToolMessage's own `status` is only "success" or "error", and to the model a declined
call is an error ("it did not run"). To the user it is not a failure: someone or something
said no. The code that declines a call marks its ToolMessage with `declined(...)` — the
approval middleware (the user rejected it, main agent, planner or subagent), the planner's
guard (not a planner tool), a subagent's guard (outside its tools or budget), the memory
guard (a command that touches the stores or settings), the file tools (a path the memory
protection denies, an edit the editor declined). The turn reports `tool_status(message)`
and never guesses from which graph node a message came, so every declined call is
`rejected` and only failures are `error`. (A path outside the workspace is a mistake in
the call, not a refusal: `error`.)

The mark lives in the message's `artifact`, which LangChain keeps in the checkpoint but
never sends to the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # LangChain is imported when a message is built: the turn module stays light
    from langchain_core.messages import ToolMessage

__all__ = ["OUTCOME_KEY", "ToolStatus", "declined", "is_declined", "outcome", "tool_status"]

ToolStatus = Literal["success", "error", "rejected"]

OUTCOME_KEY = "invincat_outcome"
_REJECTED = {OUTCOME_KEY: "rejected"}


def declined(content: str, *, tool_call_id: str | None, name: str) -> ToolMessage:
    """The result of a call that did not run (or whose effect was refused) because a
    person or a guard said no. `content` tells the model why."""
    from langchain_core.messages import ToolMessage

    return ToolMessage(
        content=content,
        tool_call_id=tool_call_id or "",  # LangChain types a call's id as optional
        name=name,
        status="error",
        artifact=dict(_REJECTED),
    )


def is_declined(message: Any) -> bool:
    artifact = getattr(message, "artifact", None)
    return isinstance(artifact, dict) and artifact.get(OUTCOME_KEY) == "rejected"


def tool_status(message: ToolMessage) -> ToolStatus:
    """The `tool_result` status of `message`: only the decider's mark makes `rejected`."""
    return outcome(getattr(message, "artifact", None), message.status)


def outcome(artifact: Any, status: Any) -> ToolStatus:
    """`tool_status` from a ToolMessage's two fields, for a message read as plain data
    (the light history reader decodes checkpoints without LangChain)."""
    if isinstance(artifact, dict) and artifact.get(OUTCOME_KEY) == "rejected":
        return "rejected"
    return "error" if status == "error" else "success"
