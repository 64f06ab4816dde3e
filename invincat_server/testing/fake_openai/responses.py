"""Writing chat-completion answers and scripted faults onto the wire."""

from __future__ import annotations

import asyncio
import json
import logging

from .completions import Reply, completion_object, error_payload, sse_event, stream_chunks
from .scenario import Step
from .wire import (
    response_head,
    send_event_stream,
    send_json,
    send_response,
)

logger = logging.getLogger("invincat_server.testing.fake_openai")


async def send_http_fault(
    writer: asyncio.StreamWriter,
    step: Step,
    status: int,
    headers: list[tuple[str, str]],
) -> None:
    """An OpenAI-style error response for an `http_NNN` fault step."""
    headers = list(headers)
    if "retry_after" in step:
        seconds = step["retry_after"]
        text = str(int(seconds)) if float(seconds).is_integer() else str(seconds)
        # The SDK prefers retry-after-ms, which allows sub-second waits in tests.
        headers += [("retry-after", text), ("retry-after-ms", str(round(seconds * 1000)))]
    await send_json(
        writer,
        status,
        error_payload(status, step.get("message"), step.get("param")),
        headers=headers,
    )


async def send_raw(
    writer: asyncio.StreamWriter, step: Step, headers: list[tuple[str, str]]
) -> None:
    """A `raw` fault step: its `body` exactly, whatever the request asked for."""
    await send_response(
        writer,
        step.get("status", 200),
        step["body"].encode("utf-8"),
        content_type=step.get("content_type", "text/plain"),
        headers=headers,
    )


async def send_completion(
    writer: asyncio.StreamWriter,
    reply: Reply,
    step: Step,
    headers: list[tuple[str, str]],
) -> None:
    """A non-streaming `chat.completion` answer (or half of one, for `cut`)."""
    answer = completion_object(reply)
    if step.get("fault") == "truncate":
        # A well-formed body that stops early: half the text, no tool calls, no finish_reason.
        message = answer["choices"][0]["message"]
        message["content"] = reply.content[: len(reply.content) // 2]
        message.pop("tool_calls", None)
        answer["choices"][0]["finish_reason"] = None
    payload = json.dumps(answer).encode()
    if step.get("fault") != "cut":
        await send_response(writer, 200, payload, headers=headers)
        return
    # Promise the full length, deliver half: the client must report a short body.
    head = response_head(
        200,
        [("Content-Type", "application/json"), ("Content-Length", str(len(payload))), *headers],
    )
    writer.write(head + payload[: len(payload) // 2])
    await writer.drain()
    logger.info("fake-openai: cut the connection mid-body")


async def send_stream(
    writer: asyncio.StreamWriter,
    reply: Reply,
    step: Step,
    include_usage: bool,
    headers: list[tuple[str, str]],
) -> None:
    """An SSE stream of `chat.completion.chunk` events in a chunked body.

    For `cut`, stop after some events and drop the connection mid-body. For `truncate`,
    stop after the same events but end the HTTP body properly: no finish chunk, no
    `[DONE]`, yet nothing a transport layer would call an error.
    """
    chunks = stream_chunks(reply, include_usage=include_usage)
    events = [sse_event(chunk) for chunk in chunks] + [sse_event("[DONE]")]
    cut = step.get("fault") == "cut"
    if cut or step.get("fault") == "truncate":
        # Body chunks sit between the role chunk and the finish (+ usage) chunks.
        body_count = len(chunks) - 2 - (1 if include_usage else 0)
        keep = min(step.get("cut_after_chunks", max(1, body_count // 2)), body_count)
        events = events[: 1 + keep]

    await send_event_stream(
        writer, events, headers, step.get("chunk_delay", 0), cut, step.get("first_chunk_delay", 0)
    )
    if cut:
        # No terminating zero-size chunk and no [DONE]: the caller closes the socket.
        logger.info("fake-openai: cut the stream after %d events", len(events))
