"""Readable transcripts of messages: the summariser's input and the offload file."""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage


def _text(message: AnyMessage) -> str:
    return message.content if isinstance(message.content, str) else message.text


def transcript(messages: Sequence[AnyMessage], *, max_tool_chars: int | None = None) -> str:
    parts: list[str] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            parts.append(f"## User\n{_text(message)}")
        elif isinstance(message, AIMessage):
            body = _text(message)
            for call in message.tool_calls:
                body += f"\n→ {call['name']}({json.dumps(call['args'], ensure_ascii=False)})"
            parts.append(f"## Assistant\n{body.strip()}")
        elif isinstance(message, ToolMessage):
            text = _text(message)
            if max_tool_chars is not None and len(text) > max_tool_chars:
                text = text[:max_tool_chars] + f"\n… ({len(text) - max_tool_chars} more chars)"
            parts.append(f"## Tool result: {message.name} ({message.status})\n{text}")
    return "\n\n".join(parts)
