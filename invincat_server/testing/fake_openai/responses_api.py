"""The Responses API (`POST /v1/responses`) over the same scripted steps.

Clients that speak only the Responses API (OpenAI's Codex CLI, for the side-by-side
benchmark) get the same scenario as chat-completions clients: a step's `content` becomes
an assistant `message` item, each of its `tool_calls` a `function_call` item. Matching
works on a chat-shaped view of the request (`chat_view`), so every `match` key keeps its
meaning. Streams are SSE with named events, as api.openai.com sends them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from .completions import Reply, split_text
from .scenario import Step
from .wire import send_event_stream, send_json

logger = logging.getLogger("invincat_server.testing.fake_openai")


def chat_view(body: dict[str, Any]) -> dict[str, Any]:
    """The request as a chat-completions body: `instructions` as a system message, input
    messages with their text, `function_call` items as assistant tool calls and
    `function_call_output` items as `tool` messages. Used for matching and token counts."""
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            messages.append({"role": item.get("role", "user"), "content": item.get("content")})
        elif kind == "function_call":
            call = {"name": item.get("name", ""), "arguments": item.get("arguments", "")}
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": item.get("call_id"), "function": call}],
                }
            )
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            messages.append({"role": "tool", "content": text})
    view: dict[str, Any] = {k: body[k] for k in ("model", "stream", "tools") if k in body}
    view["messages"] = messages
    return view


def _usage(reply: Reply) -> dict[str, Any]:
    return {
        "input_tokens": reply.usage["prompt_tokens"],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": reply.usage["completion_tokens"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.usage["total_tokens"],
    }


def _response(reply: Reply, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": reply.completion_id,
        "object": "response",
        "created_at": reply.created,
        "status": status,
        "model": reply.model,
        "output": output,
        "usage": _usage(reply) if status == "completed" else None,
    }


def output_items(reply: Reply) -> list[dict[str, Any]]:
    """The finished output items: the message (when there is text), then the calls."""
    items: list[dict[str, Any]] = []
    if reply.content:
        items.append(
            {
                "id": f"msg_{reply.completion_id}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.content, "annotations": []}],
            }
        )
    for call in reply.tool_calls:
        items.append(
            {
                "id": f"fc_{call.id}",
                "type": "function_call",
                "status": "completed",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    return items


def stream_events(reply: Reply) -> list[dict[str, Any]]:
    """The events of a streamed answer, in order: `response.created`, per item `added`,
    its deltas and `done`, then `response.completed` (with usage)."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": _response(reply, "in_progress", [])}
    ]
    items = output_items(reply)
    for index, item in enumerate(items):
        started = {**item, "status": "in_progress"}
        base = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            started["content"] = []
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": started}
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            events.append(
                {"type": "response.content_part.added", **base, "content_index": 0, "part": part}
            )
            events += [
                {"type": "response.output_text.delta", **base, "content_index": 0, "delta": piece}
                for piece in split_text(reply.content, reply.chunk_size)
            ]
            events.append(
                {
                    "type": "response.output_text.done",
                    **base,
                    "content_index": 0,
                    "text": reply.content,
                }
            )
            events.append(
                {
                    "type": "response.content_part.done",
                    **base,
                    "content_index": 0,
                    "part": item["content"][0],
                }
            )
        else:
            started["arguments"] = ""
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": started}
            )
            events += [
                {"type": "response.function_call_arguments.delta", **base, "delta": piece}
                for piece in split_text(item["arguments"], reply.chunk_size)
            ]
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    **base,
                    "arguments": item["arguments"],
                }
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": _response(reply, "completed", items)})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


async def send_responses_answer(
    writer: asyncio.StreamWriter, reply: Reply, step: Step, headers: list[tuple[str, str]]
) -> None:
    """A non-streaming `response` object (`cut`/`truncate` are not scripted here)."""
    await send_json(
        writer, 200, _response(reply, "completed", output_items(reply)), headers=headers
    )


async def send_responses_stream(
    writer: asyncio.StreamWriter, reply: Reply, step: Step, headers: list[tuple[str, str]]
) -> None:
    """The SSE stream. `cut` stops after some events and drops the connection mid-body;
    `truncate` stops after the same events but ends the body properly, without
    `response.completed`."""
    events = stream_events(reply)
    fault = step.get("fault")
    if fault in ("cut", "truncate"):
        body_count = len(events) - 2  # between response.created and response.completed
        keep = min(step.get("cut_after_chunks", max(1, body_count // 2)), body_count)
        events = events[: 1 + keep]
    encoded = [_sse(event) for event in events]
    await send_event_stream(
        writer,
        encoded,
        headers,
        step.get("chunk_delay", 0),
        fault == "cut",
        step.get("first_chunk_delay", 0),
    )
    if fault == "cut":
        logger.info("fake-openai: cut the responses stream after %d events", len(events))
