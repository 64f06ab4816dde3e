"""Thread history as plain data for front ends (no LangChain types leak out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from invincat_server.runtime.editor_context import CONTEXT_KEY, PROMPT_KEY
from invincat_server.runtime.tool_outcome import tool_status
from invincat_server.runtime.tool_summary import call_summary, result_summary


def messages_to_dicts(messages: Sequence[Any]) -> list[dict[str, Any]]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[dict[str, Any]] = []
    for message in messages:
        text = message.content if isinstance(message.content, str) else message.text
        if isinstance(message, HumanMessage):
            out.append(user_item(text, message.additional_kwargs))
        elif isinstance(message, AIMessage):
            item: dict[str, Any] = {"role": "assistant", "content": text}
            if message.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": c["id"],
                        "name": c["name"],
                        "args": c["args"],
                        "summary": call_summary(c["name"], c["args"]),
                    }
                    for c in message.tool_calls
                ]
            out.append(item)
        elif isinstance(message, ToolMessage):
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id,
                    "name": message.name,
                    "status": tool_status(message),  # as its live `tool_result` said
                    "content": text,
                    "summary": result_summary(text),
                }
            )
        elif isinstance(message, SystemMessage):
            out.append({"role": "system", "content": text})
    return out


def user_item(text: str, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """A user message for history. One sent with editor context or @mentions shows what
    the user typed and short labels of what was attached (`extra` is the message's
    `additional_kwargs`); the `<editor_context>` block itself only went to the model."""
    extra = extra or {}
    prompt = extra.get(PROMPT_KEY)
    if not isinstance(prompt, str):
        return {"role": "user", "content": text}
    labels = extra.get(CONTEXT_KEY)
    return {"role": "user", "content": prompt, "context": list(labels or [])}
