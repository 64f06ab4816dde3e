"""One live connection to an MCP server (stdio or streamable HTTP), owned by its own task.

The SDK's transports and `ClientSession` are anyio context managers that must be entered
and exited in the same task, and a transport failure tears down their task group. So each
server runs in a supervisor task that opens the connection, reports readiness, then waits
for `close()` or for the connection to end. Tool calls come from turn tasks and are raced
against the supervisor's end, so a server that dies mid-call never hangs a turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from invincat_server.runtime import private_files
from invincat_server.runtime.extensions.mcp.config import ServerSpec
from invincat_server.runtime.program_path import find_program

if TYPE_CHECKING:
    import mcp_types
    from mcp import ClientSession

log = logging.getLogger("invincat.mcp")
# The SDK logs transport noise (a server printing non-JSON, a failed session DELETE) at
# ERROR/WARNING. Without this, Python's last-resort handler would print it on the terminal;
# failures reach the user as `error` events instead, and front ends that configure logging
# still receive these records.
logging.getLogger("mcp").addHandler(logging.NullHandler())

CLOSE_TIMEOUT = 10.0
"""Bound on a server's shutdown (the SDK escalates stdin close → SIGTERM → SIGKILL)."""
_STDERR_TAIL_LINES = 8


class McpServerError(Exception):
    """The server could not be reached or failed; the message names it and says why."""


def _program(command: str, env: Mapping[str, str]) -> str:
    """A bare command name (`npx`, `uvx`) resolved here, on the absolute PATH entries
    only: the server is started in the project, where a relative entry (`.`) would find a
    program the repository planted. A command with a directory part is the config's own
    choice and is left as written. The PATH the server is given wins over ours, as it
    would in the SDK's own lookup."""
    if os.sep in command or (os.altsep and os.altsep in command):
        return command
    found = find_program(command, env if "PATH" in env else None)
    if found is None:
        raise McpServerError(f"`{command}` was not found on PATH (relative entries are skipped)")
    return found


class WatchedReadStream:
    """Wraps a transport's read stream to learn when the server side closed it.

    Implements the SDK's `ReadStream` protocol and passes `last_context` through, so the
    dispatcher behaves exactly as with the bare stream.
    """

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> WatchedReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class McpConnection:
    """A started MCP server: its tools, `call()`, and `close()`."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        cwd: Path,
        log_dir: Path,
        on_lost: Callable[[McpConnection, str], None],
    ) -> None:
        self.spec = spec
        self.cwd = cwd
        self.log_path = log_dir / f"mcp-{spec.name}.log"
        self.tools: list[mcp_types.Tool] = []
        self.failure: str | None = None
        """Why the server is unavailable (set once it failed or stopped)."""
        self._on_lost = on_lost
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stop = asyncio.Event()
        self._ended = asyncio.Event()
        self._closing = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def alive(self) -> bool:
        return self.failure is None and not self._ended.is_set()

    # lifecycle -------------------------------------------------------------------
    async def start(self) -> None:
        """Connect, handshake and list tools; raises McpServerError saying what failed."""
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._task = asyncio.create_task(self._run(), name=f"invincat-mcp-{self.name}")
        try:
            async with asyncio.timeout(self.spec.startup_timeout):
                await asyncio.shield(self._ready)
        except TimeoutError:
            await self.close()
            raise McpServerError(
                f"MCP server '{self.name}' did not finish starting within "
                f"{self.spec.startup_timeout:g}s{self._start_hint()}"
            ) from None
        except McpServerError:
            await self.close()
            raise

    async def close(self) -> None:
        """Stop the server (or the HTTP session) and wait, bounded, for it to go."""
        self._closing = True
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if self._session is None:
            # Still starting (stuck in the handshake): only cancelling interrupts it; the
            # SDK's shutdown of the process is shielded and bounded, so it still runs.
            task.cancel()
        # asyncio.wait neither raises the task's outcome nor cancels it on timeout.
        done, _ = await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=CLOSE_TIMEOUT)
        if task.done() and not task.cancelled():
            task.exception()  # already reported through failure/notify; mark it retrieved

    async def _run(self) -> None:
        from mcp import ClientSession

        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(stack))
                watched = WatchedReadStream(read, self._ended.set)
                session = await stack.enter_async_context(ClientSession(watched, write))
                await session.initialize()
                self.tools = await self._list_tools(session)
                self._session = session
                self._resolve_ready(None)
                stop = asyncio.create_task(self._stop.wait())
                ended = asyncio.create_task(self._ended.wait())
                try:
                    await asyncio.wait({stop, ended}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    ended.cancel()
                if not self._closing:
                    self._lost(f"the connection closed{self._exit_hint()}")
        except asyncio.CancelledError:
            self._resolve_ready(McpServerError(f"MCP server '{self.name}' start was cancelled"))
            raise
        except Exception as exc:  # anyio groups, transport and protocol errors alike
            log.debug("MCP server %r stopped", self.name, exc_info=True)
            self._failed(exc)
        except BaseException as exc:
            # KeyboardInterrupt, SystemExit or a group holding one: tell whoever waits for
            # the start, then let it propagate (never swallowed).
            self._failed(exc)
            raise
        finally:
            self._session = None
            self._ended.set()

    def _failed(self, exc: BaseException) -> None:
        """The connection ended with `exc`: fail a pending start, or report a lost server."""
        reason = _describe(exc)
        if self._ready is not None and not self._ready.done():
            self._resolve_ready(
                McpServerError(
                    f"MCP server '{self.name}' failed to start: {reason}{self._start_hint()}"
                )
            )
        elif not self._closing:
            self._lost(reason)

    def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        spec = self.spec
        if spec.transport == "http":
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            # Same timeouts as the SDK's default client, plus the configured headers.
            client = httpx2.AsyncClient(
                headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0)
            )
            stack.push_async_callback(client.aclose)
            return streamable_http_client(str(spec.url), http_client=client)
        from mcp import StdioServerParameters, stdio_client

        cwd = self.cwd / spec.cwd if spec.cwd else self.cwd
        params = StdioServerParameters(
            command=_program(str(spec.command), spec.env),
            args=list(spec.args),
            env=dict(spec.env) or None,
            cwd=cwd,
        )
        return stdio_client(params, errlog=self._open_log(stack))

    def _open_log(self, stack: contextlib.AsyncExitStack) -> TextIO:
        # The server's stderr goes to a log file: it must never reach our stdout (the LSP
        # channel) or clutter the terminal, and its tail explains a failed start.
        # 0600 in a 0700 $INVINCAT_HOME/logs (a server's stderr may echo its arguments).
        fd = private_files.open_file(
            self.log_path,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
            root=self.log_path.parent.parent,
        )
        handle = os.fdopen(fd, "w", encoding="utf-8", errors="replace")
        stack.callback(handle.close)
        return handle

    async def _list_tools(self, session: ClientSession) -> list[mcp_types.Tool]:
        import mcp_types

        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # a server that paginates forever must not hang start-up
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await session.list_tools(params=params)
            tools.extend(result.tools)
            cursor = result.next_cursor
            if not cursor:
                break
        return tools

    def _resolve_ready(self, error: BaseException | None) -> None:
        if self._ready is None or self._ready.done():
            return
        if error is None:
            self._ready.set_result(None)
        else:
            self._ready.set_exception(error)
            # Retrieved by start(); mark it so an abandoned future does not log a warning.
            self._ready.exception()

    def _lost(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason
            self._on_lost(self, reason)

    # calls -------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call one tool; raises McpServerError if the server is gone or does not answer."""
        session = self._session
        if session is None or not self.alive:
            raise McpServerError(self.unavailable_message())
        call = asyncio.ensure_future(
            session.call_tool(tool, arguments, read_timeout_seconds=self.spec.call_timeout)
        )
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            await asyncio.wait({call, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
            if not call.done():
                call.cancel()
        if not call.done() or call.cancelled():
            # Give the supervisor a moment to record why the connection ended.
            await asyncio.sleep(0)
            raise McpServerError(self.unavailable_message())
        try:
            return call.result()
        except Exception as exc:
            if _connection_closed(exc):
                # The supervisor notices the end a moment later; let it record why.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._ended.wait(), 1.0)
            if not self.alive:
                raise McpServerError(self.unavailable_message()) from exc
            raise McpServerError(
                f"MCP server '{self.name}' failed the `{tool}` call: {_describe(exc)}"
            ) from exc

    def unavailable_message(self) -> str:
        why = self.failure or "it is not running"
        return (
            f"MCP server '{self.name}' is unavailable ({why}); its tools cannot be used in "
            "this session. Restart invincat to reconnect."
        )

    # diagnostics -------------------------------------------------------------------
    def _stderr_tail(self) -> str:
        if self.spec.transport != "stdio":
            return ""
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in lines[-_STDERR_TAIL_LINES:] if line.strip())

    def _start_hint(self) -> str:
        tail = self._stderr_tail()
        if self.spec.transport == "http":
            return f" (url {self.spec.url})"
        where = f"; server log: {self.log_path}"
        return f"{where}; last output: {tail[-600:]}" if tail else where

    def _exit_hint(self) -> str:
        return " (the server process exited)" if self.spec.transport == "stdio" else ""


def _connection_closed(exc: BaseException) -> bool:
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def _describe(exc: BaseException) -> str:
    """The innermost useful message of an exception (anyio wraps failures in groups)."""
    from mcp import MCPError

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    raw = exc.message if isinstance(exc, MCPError) else str(exc)
    text = raw.strip().splitlines()[0] if raw.strip() else ""
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
