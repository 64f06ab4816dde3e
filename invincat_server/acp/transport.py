"""Newline-delimited JSON-RPC over stdio, hardened for `invincat --acp`.

Hand-written instead of the SDK's `NdjsonTransport` (agent-client-protocol 0.12.1) for two
reasons:

- The SDK hands every decoded line to its connection, which calls `.get` on it: a line
  that is valid JSON but not an object (`42`, `[]`) raises in the receive loop, the loop
  ends, and the agent never answers again. Here such a line gets a JSON-RPC `-32600`
  answer and the reader keeps serving; undecodable lines get `-32700`.
- The runtime reads files through a *synchronous* `DocumentSource.read_text` on the event
  loop. To ask the client for an unsaved buffer (`fs/read_text_file`) from there, the
  reply must arrive without the event loop: stdin is read by a thread, which completes
  such "blocking" requests itself and queues everything else for the loop.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import threading
from typing import IO, Any

log = logging.getLogger("invincat.acp.transport")

INVALID_REQUEST = -32600
PARSE_ERROR = -32700


class BlockingRequestError(Exception):
    """The client answered a blocking request with an error, or did not answer in time."""


class StdioTransport:
    """The SDK's message-level `Transport` (send / receive / close) over two byte streams."""

    def __init__(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._write_lock = threading.Lock()
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._blocking: dict[str, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._ids = itertools.count(1)
        self._closed = False
        threading.Thread(target=self._read_forever, name="acp-stdin", daemon=True).start()

    # Transport protocol --------------------------------------------------------------
    async def send(self, message: dict[str, Any]) -> None:
        self._write(message)

    async def receive(self) -> dict[str, Any] | None:
        return await self._queue.get()

    async def close(self) -> None:
        self._closed = True

    # blocking requests (from the event loop thread, without needing the loop) ----------
    def request_blocking(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send a request and wait for its answer on this thread. Its id is a string the
        SDK never uses (the SDK numbers its own requests), so the two cannot collide."""
        request_id = f"invincat-{next(self._ids)}"
        done = threading.Event()
        box: list[dict[str, Any]] = []
        self._blocking[request_id] = (done, box)
        try:
            self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            if not done.wait(timeout):
                raise BlockingRequestError(f"the client did not answer {method} in {timeout:g} s")
        finally:
            self._blocking.pop(request_id, None)
        answer = box[0]
        if "error" in answer:
            error = answer.get("error") or {}
            message = error.get("message") if isinstance(error, dict) else str(error)
            raise BlockingRequestError(f"the client refused {method}: {message}")
        return answer.get("result")

    # internals -----------------------------------------------------------------------
    def _write(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        with self._write_lock:
            if self._closed:
                return
            try:
                self._stdout.write(data + b"\n")
                self._stdout.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                # The client went away: nothing more can be said to it.
                log.info("writing to the client failed: %s", exc)
                self._closed = True

    def _read_forever(self) -> None:
        try:
            for line in self._stdin:
                if line.strip():
                    self._on_line(line)
        except (OSError, ValueError) as exc:
            log.info("reading from the client stopped: %s", exc)
        finally:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)

    def _on_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            log.warning("ignored a line that is not JSON: %s", exc)
            self._error(None, PARSE_ERROR, f"Parse error: the line is not valid JSON ({exc}).")
            return
        problem = _shape_problem(message)
        if problem is not None:
            log.warning("ignored an invalid JSON-RPC message: %s", problem)
            request_id = message.get("id") if isinstance(message, dict) else None
            if not isinstance(request_id, str | int) or isinstance(request_id, bool):
                request_id = None
            self._error(request_id, INVALID_REQUEST, f"Invalid request: {problem}")
            return
        waiter = self._blocking.get(message.get("id")) if "method" not in message else None
        if waiter is not None:
            done, box = waiter
            box.append(message)
            done.set()
            return
        self._loop.call_soon_threadsafe(self._queue.put_nowait, message)

    def _error(self, request_id: Any, code: int, message: str) -> None:
        self._write(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        )


def _shape_problem(message: Any) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 request, notification or response (None: it is)."""
    if not isinstance(message, dict):
        kind = "an array" if isinstance(message, list) else type(message).__name__
        return f"expected a JSON object, got {kind} (batches are not supported)."
    request_id = message.get("id")
    if "id" in message and (
        not isinstance(request_id, str | int | None) or isinstance(request_id, bool)
    ):
        return "`id` must be a string, a number or null."
    if "method" in message:
        if not isinstance(message["method"], str):
            return "`method` must be a string."
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return "`params` must be an object."
        return None
    if "id" not in message:
        return "a message needs `method` (request, notification) or `id` (response)."
    return None
