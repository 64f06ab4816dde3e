"""Readable transcripts of messages: the summariser's input and the offload file."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from invincat_server.runtime.memory.redaction import cut_redacted


def _text(message: AnyMessage) -> str:
    return message.content if isinstance(message.content, str) else message.text


def transcript(
    messages: Sequence[AnyMessage],
    *,
    max_tool_chars: int | None = None,
    redact: Callable[[str], str] | None = None,
) -> str:
    """Messages as markdown sections; with `redact`, every part is redacted, and a tool
    result is redacted before it is cut to `max_tool_chars`."""
    clean = redact or (lambda text: text)
    parts: list[str] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            parts.append(f"## User\n{clean(_text(message))}")
        elif isinstance(message, AIMessage):
            body = _text(message)
            for call in message.tool_calls:
                body += f"\n→ {call['name']}({json.dumps(call['args'], ensure_ascii=False)})"
            parts.append(f"## Assistant\n{clean(body.strip())}")
        elif isinstance(message, ToolMessage):
            text = clean(_text(message))
            if max_tool_chars is not None and len(text) > max_tool_chars:
                more = len(text) - max_tool_chars
                text = cut_redacted(text, max_tool_chars, marker="") + f"\n… ({more} more chars)"
            parts.append(f"## Tool result: {message.name} ({message.status})\n{text}")
    return "\n\n".join(parts)
