"""FakeOpenAIServer: a scripted OpenAI-compatible chat-completions endpoint.

Runs on plain asyncio, either inside the caller's event loop (`start`/`stop`) or on its
own loop in a daemon thread (`start_in_thread`/`stop_thread`) so synchronous tests and
tests that spawn the `invincat` CLI as a subprocess can use it too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import threading
import time
from types import TracebackType
from typing import Any

from .completions import DEFAULT_MODEL, EXHAUSTED_CONTENT, build_reply, error_payload
from .recording import CHAT_PATHS, RESPONSES_PATHS, RecordedRequest, RequestLog
from .responses import send_completion, send_http_fault, send_raw, send_stream
from .responses_api import chat_view, send_responses_answer, send_responses_stream
from .scenario import ScenarioError, Script, Step, http_fault_status
from .wire import MAX_HEAD_BYTES, BadRequest, HttpRequest, read_request, send_json

logger = logging.getLogger("invincat_server.testing.fake_openai")

MODEL_PATHS = frozenset({"/v1/models", "/models"})
THREAD_START_TIMEOUT = 10.0


class FakeOpenAIServer:
    """Scripted fake of the OpenAI chat-completions API. See docs/fake-openai.md."""

    def __init__(
        self, steps: list[dict[str, Any]] | None = None, *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.host = host
        self._requested_port = port
        self._script = Script(steps)
        self._log = RequestLog()
        self._server: asyncio.Server | None = None
        self._port: int | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self._counter_lock = threading.Lock()
        self._call_ids = itertools.count(1)
        self._response_ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None

    # --- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        """Start listening on the running event loop."""
        if self._server is not None:
            raise RuntimeError("FakeOpenAIServer is already running")
        self._server = await asyncio.start_server(
            self._on_connection, self.host, self._requested_port, limit=MAX_HEAD_BYTES
        )
        self._port = self._server.sockets[0].getsockname()[1]
        logger.info("listening on %s", self.base_url)

    async def stop(self) -> None:
        """Stop listening and drop open connections (hanging ones included)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        # Cancel in-flight handlers ourselves: a `hang` step would otherwise keep its
        # connection (and, on Python 3.12+, `wait_closed`) alive forever.
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()

    def start_in_thread(self) -> FakeOpenAIServer:
        """Run the server on its own event loop in a daemon thread; returns self."""
        if self._thread is not None or self._server is not None:
            raise RuntimeError("FakeOpenAIServer is already running")
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._thread_loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # report any start failure to the caller
                ready.set_exception(exc)
                loop.close()
                return
            ready.set_result(None)
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        try:
            ready.result(timeout=THREAD_START_TIMEOUT)
        except BaseException:
            self._thread.join(THREAD_START_TIMEOUT)
            self._thread = self._thread_loop = None
            raise
        return self

    def stop_thread(self) -> None:
        """Stop a server started with `start_in_thread` and join its thread."""
        loop, thread = self._thread_loop, self._thread
        if loop is None or thread is None:
            return
        try:
            if not loop.is_closed():
                future = asyncio.run_coroutine_threadsafe(self.stop(), loop)
                future.result(timeout=THREAD_START_TIMEOUT)
                loop.call_soon_threadsafe(loop.stop)
        finally:
            thread.join(THREAD_START_TIMEOUT)
            self._thread = self._thread_loop = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start_in_thread()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop_thread()

    async def __aenter__(self) -> FakeOpenAIServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # --- public API ----------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return self._port

    @property
    def base_url(self) -> str:
        """`http://HOST:PORT/v1`, ready for `OPENAI_BASE_URL` / `ChatOpenAI(base_url=...)`."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of every recorded request (control endpoints excluded)."""
        return self._log.snapshot()

    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat/completions requests, in arrival order."""
        return [r.body for r in self._log.snapshot() if r.is_chat]

    def responses_requests(self) -> list[dict[str, Any]]:
        """Bodies of the Responses API (`/v1/responses`) requests, in arrival order."""
        return [r.body for r in self._log.snapshot() if r.is_responses]

    def add_steps(self, steps: list[dict[str, Any]]) -> None:
        """Append steps (validated first; ScenarioError on a bad one). Thread-safe."""
        self._script.add(steps)

    def pending_steps(self) -> list[dict[str, Any]]:
        """Steps not consumed yet (a step with `times` N left appears N times)."""
        return self._script.pending()

    def reset(self) -> None:
        """Forget all steps and recorded requests."""
        self._script.clear()
        self._log.clear()

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until `count` requests were recorded (useful with `hang`, subprocesses)."""
        return self._log.wait_for(count, timeout)

    # --- connection handling -------------------------------------------------------

    def _next_call_id(self) -> str:
        with self._counter_lock:
            return f"call_{next(self._call_ids)}"

    def _next_response_number(self) -> int:
        with self._counter_lock:
            return next(self._response_ids)

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away (timeouts, cancelled streams): nobody to answer
        except asyncio.CancelledError:
            # Only `stop()` cancels handlers. Ending normally instead of re-raising avoids
            # Python 3.11's stream callback calling `task.exception()` on a cancelled task
            # and logging a spurious "Exception in callback" traceback.
            pass
        except Exception:
            logger.exception("fake-openai: internal error while serving a request")
        finally:
            if task is not None:
                self._connections.discard(task)
            # close() flushes what was written, then sends FIN. For `cut` that is the point:
            # the body is left unterminated and the client sees EOF mid-message.
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await read_request(reader, writer)
        except BadRequest as exc:
            await send_json(writer, 400, error_payload(400, f"fake-openai: {exc}"))
            return
        if request is None:
            return
        route = request.path.rstrip("/") or "/"
        method = request.method
        if route in CHAT_PATHS or route in RESPONSES_PATHS:
            if method != "POST":
                await self._not_allowed(request, writer)
            else:
                await self._chat(request, reader, writer, responses_api=route in RESPONSES_PATHS)
        elif route in MODEL_PATHS:
            if method != "GET":
                await self._not_allowed(request, writer)
            else:
                self._record(request, None, None, "models")
                await send_json(writer, 200, self._models_payload())
        elif route.startswith("/_fake/"):
            await self._control(route, request, writer)
        else:
            self._record(request, _safe_json(request), None, "not_found")
            logger.warning("fake-openai: no route for %s %s", method, request.target)
            payload = error_payload(404, f"fake-openai: unknown path {request.path}")
            await send_json(writer, 404, payload)

    async def _not_allowed(self, request: HttpRequest, writer: asyncio.StreamWriter) -> None:
        self._record(request, _safe_json(request), None, "not_found")
        payload = error_payload(405, f"fake-openai: {request.method} not allowed here")
        await send_json(writer, 405, payload)

    def _record(
        self, request: HttpRequest, body: Any, step: Step | None, outcome: str
    ) -> RecordedRequest:
        return self._log.record(
            method=request.method,
            path=request.path,
            headers=request.headers,
            body=body,
            step=step,
            outcome=outcome,
        )

    def _models_payload(self) -> dict[str, Any]:
        names = {DEFAULT_MODEL}
        names |= {
            step["match"]["model"]
            for step in self._script.pending()
            if "model" in (step.get("match") or {})
        }
        return {
            "object": "list",
            "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "fake-openai"}
                for name in sorted(names)
            ],
        }

    async def _control(
        self, route: str, request: HttpRequest, writer: asyncio.StreamWriter
    ) -> None:
        """`/_fake/*` endpoints; deliberately not recorded so polling them is harmless."""
        key = (request.method, route)
        if key == ("GET", "/_fake/requests"):
            await send_json(writer, 200, [r.to_json() for r in self._log.snapshot()])
        elif key == ("GET", "/_fake/steps"):
            await send_json(writer, 200, {"steps": self._script.pending()})
        elif key == ("POST", "/_fake/steps"):
            try:
                data = request.json()
                steps: Any = data.get("steps") if isinstance(data, dict) else data
                self._script.add(steps)
            except (ValueError, ScenarioError) as exc:
                await send_json(writer, 400, error_payload(400, f"fake-openai: {exc}"))
                return
            await send_json(writer, 200, {"added": len(steps), "pending": len(self._script)})
        elif key == ("POST", "/_fake/reset"):
            self.reset()
            await send_json(writer, 200, {"ok": True})
        else:
            payload = error_payload(404, f"fake-openai: unknown control {request.method} {route}")
            await send_json(writer, 404, payload)

    # --- chat completions ----------------------------------------------------------

    async def _chat(
        self,
        request: HttpRequest,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        responses_api: bool = False,
    ) -> None:
        body = _safe_json(request)
        if not isinstance(body, dict):
            self._record(request, body, None, "bad_request")
            message = "fake-openai: the request body must be a JSON object"
            await send_json(writer, 400, error_payload(400, message))
            return

        # Steps match (and prompt tokens are counted) on the chat-shaped view of a
        # Responses API request, so one scenario serves both APIs.
        view = chat_view(body) if responses_api else body
        step = self._script.take(view)
        fault = step.get("fault") if step else None
        outcome = "exhausted" if step is None else (f"fault:{fault}" if fault else "ok")
        record = self._record(request, body, step, outcome)
        logger.info(
            "#%d %s %s model=%s stream=%s -> %s",
            record.index,
            request.method,
            request.path,
            body.get("model"),
            bool(body.get("stream")),
            outcome,
        )
        if step is None:
            # Never hang or 500 here: a test that under-scripts should fail on an
            # assertion about the answer, with this warning explaining why.
            logger.warning(
                "fake-openai: script exhausted (no step fits request #%d); answering %r",
                record.index,
                EXHAUSTED_CONTENT,
            )
            step = {"content": EXHAUSTED_CONTENT}

        if step.get("delay"):
            await asyncio.sleep(step["delay"])
        number = self._next_response_number()
        headers = [("x-request-id", f"req_fake_{number}")]

        if fault == "hang":
            # Never answer; return (and close) only once the client gives up.
            while await reader.read(65536):
                pass
            return
        if fault == "raw":
            await send_raw(writer, step, headers)
            return
        status = http_fault_status(fault)
        if status is not None:
            await send_http_fault(writer, step, status, headers)
            return

        reply = build_reply(
            step,
            view,
            completion_id=f"resp_fake{number}" if responses_api else f"chatcmpl-fake{number}",
            created=int(time.time()),
            next_call_id=self._next_call_id,
        )
        if responses_api:
            if body.get("stream"):
                await send_responses_stream(writer, reply, step, headers)
            else:
                await send_responses_answer(writer, reply, step, headers)
        elif body.get("stream"):
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
            await send_stream(writer, reply, step, include_usage, headers)
        else:
            await send_completion(writer, reply, step, headers)


def _safe_json(request: HttpRequest) -> Any:
    """Parsed body for the log; the raw text when it is not JSON (recorded, not fatal)."""
    try:
        return request.json()
    except ValueError:
        return request.body.decode("utf-8", errors="replace")
