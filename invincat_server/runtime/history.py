"""Thread history as plain data for front ends (no LangChain types leak out).

Two sources, one shape: LangChain messages from the agent graph's state
(`messages_to_dicts`), and the same messages decoded as plain fields from the checkpoint
without LangChain (`fields_to_dicts`, used by the light reader in
runtime/checkpoint_reader.py while the stack is still loading). Both go through
`_item`, so the editor sees the same history whichever answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from invincat_server.runtime.tool_outcome import outcome
from invincat_server.runtime.tool_phrases import phrase
from invincat_server.runtime.tool_summary import result_summary

_ROLES = {
    "human": "user",
    "ai": "assistant",
    "tool": "tool",
    "system": "system",
    # Chunk subclasses (a streamed message kept as is) are their message's kind.
    "HumanMessageChunk": "user",
    "AIMessageChunk": "assistant",
    "ToolMessageChunk": "tool",
    "SystemMessageChunk": "system",
}


def messages_to_dicts(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """LangChain messages (HumanMessage, AIMessage, ToolMessage, SystemMessage)."""
    fields = [
        {
            "type": getattr(m, "type", None),
            "content": m.content,
            "tool_calls": getattr(m, "tool_calls", None),
            "tool_call_id": getattr(m, "tool_call_id", None),
            "name": getattr(m, "name", None),
            "status": getattr(m, "status", None),
            "artifact": getattr(m, "artifact", None),
            "additional_kwargs": getattr(m, "additional_kwargs", None),
        }
        for m in messages
    ]
    return fields_to_dicts(fields)


def fields_to_dicts(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages given as their fields (`type` "human"/"ai"/"tool"/"system", `content`,
    …), e.g. a message's `model_dump()`; other types (remove markers, chunks) are skipped."""
    out: list[dict[str, Any]] = []
    for message in messages:
        item = _item(message)
        if item is not None:
            out.append(item)
    return out


def user_item(text: str, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """A user message for history. One sent with editor context or @mentions shows what
    the user typed and short labels of what was attached (`extra` is the message's
    `additional_kwargs`); the `<editor_context>` block itself only went to the model."""
    # Imported here: editor_context pulls in the memory package (redaction), which the
    # light history reader must not load on the event loop.
    from invincat_server.runtime.editor_context import CONTEXT_KEY, PROMPT_KEY

    extra = extra or {}
    prompt = extra.get(PROMPT_KEY)
    if not isinstance(prompt, str):
        return {"role": "user", "content": text}
    labels = extra.get(CONTEXT_KEY)
    return {"role": "user", "content": prompt, "context": list(labels or [])}


def text_of(content: Any) -> str:
    """A message's text, as LangChain's `message.text`: a string, or the text blocks of
    a list of content blocks joined."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "".join(parts)


def _item(message: Mapping[str, Any]) -> dict[str, Any] | None:
    role = _ROLES.get(str(message.get("type")))
    if role is None:
        return None
    text = text_of(message.get("content"))
    if role == "assistant":
        item: dict[str, Any] = {"role": role, "content": text}
        calls = message.get("tool_calls") or []
        if calls:
            item["tool_calls"] = [
                {
                    "id": c["id"],
                    "name": c["name"],
                    "args": c["args"],
                    "summary": phrase(c["name"], c["args"]).title,
                }
                for c in calls
            ]
        return item
    if role == "tool":
        return {
            "role": role,
            "tool_call_id": message.get("tool_call_id"),
            "name": message.get("name"),
            # as its live `tool_result` said
            "status": outcome(message.get("artifact"), message.get("status")),
            "content": text,
            "summary": result_summary(text),
        }
    if role == "user":
        return user_item(text, message.get("additional_kwargs"))
    return {"role": role, "content": text}
