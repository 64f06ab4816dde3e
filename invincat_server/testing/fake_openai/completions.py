"""Chat-completions payloads shaped like the real OpenAI API.

Field order and presence follow what api.openai.com sends (e.g. `usage: null` on every
chunk when usage was requested, a `choices: []` usage chunk at the end), because the
SDK and LangChain parsers are the thing under test and they key off those details.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .scenario import Step, message_text

EXHAUSTED_CONTENT = "fake-openai: script exhausted"
DEFAULT_CHUNK_SIZE = 8
DEFAULT_MODEL = "fake-model"
SYSTEM_FINGERPRINT = "fp_fake_openai"


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str
    """Exactly the string sent as `function.arguments` (may be invalid JSON on purpose)."""


@dataclass(frozen=True)
class Reply:
    """Everything needed to render one assistant answer, streamed or not."""

    completion_id: str
    created: int
    model: str
    content: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str
    usage: dict[str, int]
    chunk_size: int


def estimate_tokens(text: str) -> int:
    """Rough token count (chars / 4, rounded up) — only needs to be plausible and stable."""
    return (len(text) + 3) // 4


def prompt_text(body: dict[str, Any]) -> str:
    """All text the request sends as messages, including earlier tool-call arguments."""
    pieces: list[str] = []
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        pieces.append(message_text(message))
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                pieces.append(str(function.get("name", "")))
                pieces.append(str(function.get("arguments", "")))
    return "".join(pieces)


def build_reply(
    step: Step,
    body: dict[str, Any],
    *,
    completion_id: str,
    created: int,
    next_call_id: Callable[[], str],
) -> Reply:
    content: str = step.get("content", "")
    calls: list[ToolCall] = []
    for spec in step.get("tool_calls", []):
        if "arguments_raw" in spec:
            arguments = spec["arguments_raw"]
        else:
            # Compact separators, like the real API's argument strings.
            arguments = json.dumps(spec.get("arguments", {}), separators=(",", ":"))
        calls.append(
            ToolCall(id=spec.get("id") or next_call_id(), name=spec["name"], arguments=arguments)
        )

    explicit: dict[str, int] = step.get("usage", {})
    output_text = content + "".join(c.name + c.arguments for c in calls)
    prompt_tokens = explicit.get("prompt_tokens", estimate_tokens(prompt_text(body)))
    completion_tokens = explicit.get("completion_tokens", estimate_tokens(output_text))
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": explicit.get("total_tokens", prompt_tokens + completion_tokens),
    }
    model = body.get("model")
    return Reply(
        completion_id=completion_id,
        created=created,
        model=model if isinstance(model, str) and model else DEFAULT_MODEL,
        content=content,
        tool_calls=tuple(calls),
        finish_reason=step.get("finish_reason") or ("tool_calls" if calls else "stop"),
        usage=usage,
        chunk_size=step.get("chunk_size", DEFAULT_CHUNK_SIZE),
    )


def split_text(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _chunk(
    reply: Reply, delta: dict[str, Any], finish_reason: str | None, include_usage: bool
) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "id": reply.completion_id,
        "object": "chat.completion.chunk",
        "created": reply.created,
        "model": reply.model,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }
    if include_usage:
        chunk["usage"] = None
    return chunk


def stream_chunks(reply: Reply, *, include_usage: bool) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects of a streamed answer, in order.

    Layout: role chunk, content pieces, per tool call a header chunk (index, id, type,
    name, empty arguments) then argument fragments, the finish chunk, and the usage chunk
    when `stream_options.include_usage` was requested.
    """
    size = reply.chunk_size
    chunks = [_chunk(reply, {"role": "assistant", "content": ""}, None, include_usage)]
    chunks += [
        _chunk(reply, {"content": piece}, None, include_usage)
        for piece in split_text(reply.content, size)
    ]
    for index, call in enumerate(reply.tool_calls):
        header = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        chunks.append(_chunk(reply, {"tool_calls": [header]}, None, include_usage))
        chunks += [
            _chunk(
                reply,
                {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]},
                None,
                include_usage,
            )
            for fragment in split_text(call.arguments, size)
        ]
    chunks.append(_chunk(reply, {}, reply.finish_reason, include_usage))
    if include_usage:
        chunks.append(
            {
                "id": reply.completion_id,
                "object": "chat.completion.chunk",
                "created": reply.created,
                "model": reply.model,
                "system_fingerprint": SYSTEM_FINGERPRINT,
                "choices": [],
                "usage": dict(reply.usage),
            }
        )
    return chunks


def completion_object(reply: Reply) -> dict[str, Any]:
    """The non-streaming `chat.completion` answer."""
    message: dict[str, Any] = {
        "role": "assistant",
        # The real API sends null content for a pure tool-call answer.
        "content": reply.content if reply.content or not reply.tool_calls else None,
        "refusal": None,
    }
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in reply.tool_calls
        ]
    return {
        "id": reply.completion_id,
        "object": "chat.completion",
        "created": reply.created,
        "model": reply.model,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": dict(reply.usage),
    }


def sse_event(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {data}\n\n".encode()


def error_payload(
    status: int, message: str | None = None, param: str | None = None
) -> dict[str, Any]:
    """OpenAI-style error body; type/code mirror what the real API uses per status."""
    if status == 429:
        kind, code = "requests", "rate_limit_exceeded"
        default = "Rate limit reached for fake-model (fake-openai scripted fault)."
    elif status >= 500:
        kind, code = "server_error", None
        default = "The server had an error while processing your request (fake-openai)."
    elif status == 401:
        kind, code = "invalid_request_error", "invalid_api_key"
        default = "Incorrect API key provided (fake-openai scripted fault)."
    else:
        kind, code = "invalid_request_error", None
        default = f"Request rejected with HTTP {status} (fake-openai scripted fault)."
    return {"error": {"message": message or default, "type": kind, "param": param, "code": code}}
