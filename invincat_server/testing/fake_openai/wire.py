"""Just enough HTTP/1.1 for OpenAI clients: parse one request, write one response.

Every response carries `Connection: close` and the server closes the socket after it.
That sidesteps keep-alive races (a client reusing a pooled connection the server is
about to drop) and is handled by httpx/httpcore, undici and curl alike: they see the
header, finish reading the body and open a new connection for the next request (which
is also what makes SDK retries work). Streaming bodies use chunked transfer encoding,
not close-delimited framing, so an abrupt close mid-stream is a visible protocol error
for the client instead of a silently shorter body.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024


class BadRequest(Exception):
    """The bytes on the wire are not an HTTP/1.1 request we can serve."""


@dataclass
class HttpRequest:
    method: str
    target: str
    """Request target as sent, including any query string."""
    path: str
    """Target without query string."""
    headers: dict[str, str] = field(default_factory=dict)
    """Header names lower-cased; repeated headers joined with ", "."""
    body: bytes = b""

    def json(self) -> Any:
        """Parsed JSON body; None when the body is empty. Raises ValueError if invalid."""
        if not self.body.strip():
            return None
        return json.loads(self.body)


async def _read_chunked_body(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            # Chunk extensions (";name=value") are legal and ignored.
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise BadRequest(f"bad chunk size line {size_line!r}") from exc
        if size == 0:
            # Skip trailers up to the blank line.
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return bytes(body)
        if len(body) + size > MAX_BODY_BYTES:
            raise BadRequest("request body too large")
        body += await reader.readexactly(size)
        await reader.readexactly(2)  # CRLF after each chunk


def _parse_headers(lines: list[str]) -> dict[str, str]:
    """Header lines as a dict of lower-case names; repeated headers are joined with ", "."""
    headers: dict[str, str] = {}
    for line in lines:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise BadRequest(f"bad header line {line!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> HttpRequest | None:
    """Read one request; None if the client closed the connection before sending one."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise BadRequest("connection closed in the middle of the request head") from exc
    except asyncio.LimitOverrunError as exc:
        raise BadRequest("request head too large") from exc

    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(f"bad request line {lines[0]!r}")
    method, target, _version = parts
    headers = _parse_headers(lines[1:])

    # curl (and some other clients) wait for this before sending large bodies.
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()

    body = b""
    try:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _read_chunked_body(reader)
        elif "content-length" in headers:
            try:
                length = int(headers["content-length"])
            except ValueError as exc:
                raise BadRequest("bad content-length") from exc
            if length < 0 or length > MAX_BODY_BYTES:
                raise BadRequest("bad content-length")
            body = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise BadRequest("connection closed in the middle of the request body") from exc

    path = target.split("?", 1)[0]
    return HttpRequest(method=method.upper(), target=target, path=path, headers=headers, body=body)


def response_head(status: int, headers: list[tuple[str, str]]) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers)]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send_response(
    writer: asyncio.StreamWriter,
    status: int,
    body: bytes,
    *,
    content_type: str = "application/json",
    headers: list[tuple[str, str]] | None = None,
) -> None:
    """Write a complete, Content-Length framed response."""
    all_headers = [
        ("Content-Type", content_type),
        ("Content-Length", str(len(body))),
        *(headers or []),
    ]
    writer.write(response_head(status, all_headers) + body)
    await writer.drain()


async def send_json(
    writer: asyncio.StreamWriter,
    status: int,
    payload: Any,
    *,
    headers: list[tuple[str, str]] | None = None,
) -> None:
    await send_response(writer, status, json.dumps(payload).encode(), headers=headers)


def encode_chunk(data: bytes) -> bytes:
    """One chunk of a chunked transfer-encoded body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


LAST_CHUNK = b"0\r\n\r\n"


async def send_event_stream(
    writer: asyncio.StreamWriter,
    events: list[bytes],
    headers: list[tuple[str, str]],
    chunk_delay: float,
    cut: bool,
    first_chunk_delay: float = 0,
) -> None:
    """SSE `events` (already encoded) as a chunked `text/event-stream` body, `chunk_delay`
    seconds apart, the first `first_chunk_delay` seconds after the response head (what a
    local server reading a long prompt does). With `cut` the terminating zero-size chunk
    is left out: the caller then drops the connection mid-body."""
    writer.write(
        response_head(
            200,
            [
                ("Content-Type", "text/event-stream; charset=utf-8"),
                ("Transfer-Encoding", "chunked"),
                ("Cache-Control", "no-cache"),
                *headers,
            ],
        )
    )
    await writer.drain()
    if first_chunk_delay:
        await asyncio.sleep(first_chunk_delay)
    for i, event in enumerate(events):
        if i and chunk_delay:
            await asyncio.sleep(chunk_delay)
        writer.write(encode_chunk(event))
        await writer.drain()
    if not cut:
        writer.write(LAST_CHUNK)
        await writer.drain()
