"""What the model server actually sent, for naming an answer that is not OpenAI's.

A wrong base URL, a login page in a proxy or a server that speaks another API answers
with an HTML page, other JSON or a broken stream. The OpenAI SDK's stream decoder skips
whatever is not an SSE `data:` line, so such an answer looks like an empty stream ("no
finish_reason") or fails deep inside it (`JSONDecodeError`), and its bytes are gone. So
the model's HTTP client gets a response hook that keeps, for the request in progress,
the status, content type and first bytes of the body as the SDK reads them
(`ResponseProbe`); `StrictChatOpenAI` turns a stream that carried nothing OpenAI-shaped
into a `NotOpenAIResponseError` that says what came back.
"""

from __future__ import annotations

import contextvars
import unicodedata
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2

KEEP_BYTES = 4096  # kept per response: room for the redaction rules around the shown part
SHOWN_CHARS = 200  # how much of the body an error message shows


@dataclass
class ResponseProbe:
    """The latest response to one model call (a retry replaces the earlier one)."""

    status: int | None = None
    content_type: str = ""
    content_encoding: str = ""
    head: bytearray = field(default_factory=bytearray)

    def seen(self, response: httpx2.Response) -> None:
        self.status = response.status_code
        self.content_type = response.headers.get("content-type", "")
        self.content_encoding = response.headers.get("content-encoding", "")
        self.head = bytearray()

    def keep(self, data: bytes) -> None:
        room = KEEP_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]

    def body_start(self) -> bytes:
        """The first bytes of the body, decompressed when the server compressed it."""
        raw = bytes(self.head)
        encoding = self.content_encoding.lower().strip()
        if encoding in ("gzip", "deflate"):
            wbits = 31 if encoding == "gzip" else 15
            try:
                return zlib.decompressobj(wbits).decompress(raw, KEEP_BYTES)
            except zlib.error:
                return raw
        return raw


# The probe of the model call running in this task: set by StrictChatOpenAI around one
# call, filled by the HTTP client's hook, which runs inside that call.
current_probe: contextvars.ContextVar[ResponseProbe | None] = contextvars.ContextVar(
    "invincat_model_response_probe", default=None
)


def _byte_streams() -> tuple[type[Any], type[Any]]:
    import httpx2

    class TeeAsync(httpx2.AsyncByteStream):
        def __init__(self, inner: Any, probe: ResponseProbe) -> None:
            self.inner, self.probe = inner, probe

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for data in self.inner:
                self.probe.keep(data)
                yield data

        async def aclose(self) -> None:
            await self.inner.aclose()

    class TeeSync(httpx2.SyncByteStream):
        def __init__(self, inner: Any, probe: ResponseProbe) -> None:
            self.inner, self.probe = inner, probe

        def __iter__(self) -> Iterator[bytes]:
            for data in self.inner:
                self.probe.keep(data)
                yield data

        def close(self) -> None:
            self.inner.close()

    return TeeAsync, TeeSync


def _watch(response: httpx2.Response, tee: type[Any]) -> None:
    probe = current_probe.get()
    if probe is None:
        return  # not a model call (the memory agent's title request, a test's own call)
    probe.seen(response)
    response.stream = tee(response.stream, probe)


@cache
def http_clients(base_url: str | None, timeout: float) -> tuple[Any, Any]:
    """The (sync, async) HTTP clients of the chat models: the SDK's defaults plus the
    response hook. Cached like langchain-openai caches its own, so models share a pool."""
    import openai

    tee_async, tee_sync = _byte_streams()

    async def on_async_response(response: httpx2.Response) -> None:
        _watch(response, tee_async)

    def on_sync_response(response: httpx2.Response) -> None:
        _watch(response, tee_sync)

    common: dict[str, Any] = {"timeout": timeout}
    if base_url:
        common["base_url"] = base_url
    sync_client = openai.DefaultHttpxClient(**common, event_hooks={"response": [on_sync_response]})
    async_client = openai.DefaultAsyncHttpxClient(
        **common, event_hooks={"response": [on_async_response]}
    )
    return sync_client, async_client


def escape_controls(text: str) -> str:
    """Control and format characters spelled out (`\\x1b`, `\\n`, `\\u202e`), so a body
    can neither move the cursor nor reorder the message it is quoted in."""
    out = []
    for char in text:
        if char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif unicodedata.category(char) in ("Cc", "Cf"):
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


def quoted_body(body: bytes, secrets: tuple[str, ...] = ()) -> str:
    """The start of a body for an error message: decoded, the given secrets and anything
    the redaction rules recognise replaced, cut to SHOWN_CHARS, controls escaped."""
    from invincat_server.runtime.memory.redaction import redact_and_cut

    text = body.decode("utf-8", errors="replace")
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[REDACTED:api_key]")
    return escape_controls(redact_and_cut(text, SHOWN_CHARS))


def describe_response(
    status: int | None,
    content_type: str,
    body: bytes,
    secrets: tuple[str, ...] = (),
) -> str:
    """`HTTP 200, content type text/html, body starts '<html>…'` (or `an empty body`)."""
    parts = [f"HTTP {status}" if status is not None else "an answer"]
    parts.append(f"content type {content_type}" if content_type else "no content type")
    stripped = body.strip()
    if not stripped:
        parts.append("an empty body")
    else:
        parts.append(f"body starts '{quoted_body(stripped, secrets)}'")
    return ", ".join(parts)
