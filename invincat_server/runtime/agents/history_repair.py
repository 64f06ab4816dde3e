"""Make the message list sent to the model valid, whatever the checkpoint holds.

A turn cancelled while a tool runs leaves an AI message whose tool calls never got a
result, and a model that sent malformed tool-call arguments leaves `invalid_tool_calls`.
OpenAI-compatible APIs reject such histories outright, so before every model call we
answer orphan calls with a note and drop unusable fragments. The checkpoint itself is not
rewritten: the user can still see exactly what happened.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

INTERRUPTED_NOTE = (
    "This tool call was interrupted before it finished (the user cancelled the turn). "
    "It may not have completed; check the state and run it again if it is still needed."
)


def repair_history(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """Return messages where every tool call has exactly one result right after it."""
    called: set[str] = set()
    responded: set[str] = set()
    repaired: list[AnyMessage] = []
    pending: list[dict[str, Any]] = []

    def flush_pending() -> None:
        for call in pending:
            responded.add(call["id"])
            repaired.append(
                ToolMessage(
                    content=INTERRUPTED_NOTE,
                    tool_call_id=call["id"],
                    name=call["name"],
                    status="error",
                )
            )
        pending.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in called or message.tool_call_id in responded:
                continue  # a result without its call (or a second one) is rejected by the API
            responded.add(message.tool_call_id)
            pending[:] = [c for c in pending if c["id"] != message.tool_call_id]
            repaired.append(message)
            continue
        flush_pending()
        if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
            calls = [c for c in message.tool_calls if c.get("id")]
            if message.invalid_tool_calls or len(calls) != len(message.tool_calls):
                content = message.content or "(a malformed tool call was dropped here)"
                message = message.model_copy(
                    update={"tool_calls": calls, "invalid_tool_calls": [], "content": content}
                )
            called.update(str(c["id"]) for c in calls)  # kept only calls with an id
            pending.extend(dict(c) for c in calls)
        repaired.append(message)
    flush_pending()
    return repaired


class HistoryRepairMiddleware(AgentMiddleware):
    """Applies `repair_history` to every model request."""

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        return await handler(request.override(messages=repair_history(request.messages)))
