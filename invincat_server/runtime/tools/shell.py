"""The execute tool: run a shell command in the workspace and clean up after it.

Every command runs in its own session (and so its own process group). When the call
ends - normally, on timeout, or because the awaiting task was cancelled - the whole group
is killed, so a `server &` or a stray `sleep` cannot outlive the tool call and pile up
across an agent run.

stdout and stderr share one pipe that we create ourselves (not asyncio's pipes): that way
waiting for the process never waits for the pipe, and we decide when to stop reading. A
background child holding the pipe open therefore cannot hang the call: we wait for the
main process, kill the group (closing the pipe's other ends), then drain what is left,
with a time bound for anything that escaped the group (setsid, daemons).

The command's environment is the server's without credentials (runtime/shell_env.py):
Invincat's own API key and LSP token, and every secret-named variable the user did not
keep, so an approved `env` or a build script cannot read them.

With a sandbox (runtime/sandbox) the command runs under bubblewrap: `bwrap` leads the
process group and takes its namespace down with it (`--die-with-parent`, pid namespace),
so the kill above covers sandboxed commands the same way.

While the command runs, its output also goes out live as `tool_output` events (whole
lines, a few events a second), through the same line filter the memory guard applies to
the tool result: a front end never shows live what the result withholds.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from langchain_core.tools import BaseTool, ToolException
from langgraph.config import get_config, get_stream_writer
from pydantic import BaseModel, Field, StrictBool

from invincat_server.runtime.checkpoints import recorder as checkpoint_recorder
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.sandbox.gate import ExecuteSandbox
from invincat_server.runtime.shell_env import command_environment
from invincat_server.runtime.tools.files import make_tool, tool_errors

__all__ = [
    "CommandResult",
    "LiveOutput",
    "build_shell_tools",
    "kill_process_group",
    "live_output_filtered",
    "run_command",
]

SHELL = "/bin/bash"
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL: time for cleanup handlers to run
DRAIN_TIMEOUT = 1.0  # seconds to keep reading after the group is gone
_POLL = 0.02
_READ_CHUNK = 65536
LIVE_INTERVAL = 0.1  # seconds: at most ~10 `tool_output` events a second
LIVE_MAX_LINE = 4096  # a longer unfinished line is not shown live (the result has it)

LineFilter = Callable[[str], str]


@dataclass(frozen=True)
class _LiveTarget:
    tool_call_id: str
    line_filter: LineFilter


# Set by the memory guard around each `execute` call it lets run: the call's id and the
# map from an output line to what the tool result will show for it (the line itself, or a
# "withheld" marker). Without it (no guard) nothing is streamed: live output fails closed.
_LIVE_TARGET: ContextVar[_LiveTarget | None] = ContextVar("execute_live_target", default=None)


@contextlib.contextmanager
def live_output_filtered(tool_call_id: str, line_filter: LineFilter) -> Iterator[None]:
    """Within this block, `execute` streams its output live as `tool_output` events for
    ``tool_call_id``, each line passed through ``line_filter`` first."""
    token = _LIVE_TARGET.set(_LiveTarget(tool_call_id, line_filter))
    try:
        yield
    finally:
        _LIVE_TARGET.reset(token)


class LiveOutput:
    """Turns a stream of output text into coalesced chunks of whole, filtered lines.

    Only complete lines go out (plus the unfinished last one when the command ends): the
    filter matches whole lines, so a secret split across two reads is still caught. A
    chunk goes out at once if none went out for ``interval`` seconds, else when the
    interval is up (a timer on the running loop), so a line printed before a long pause
    shows without waiting for more output.
    """

    def __init__(
        self,
        emit: Callable[[str], None],
        line_filter: LineFilter | None = None,
        interval: float = LIVE_INTERVAL,
    ) -> None:
        self._emit = emit
        self._filter = line_filter
        self._interval = interval
        self._partial = ""
        self._skipping = False  # inside an over-long line, which is not shown live
        self._ready: list[str] = []
        self._last = float("-inf")
        self._timer: asyncio.TimerHandle | None = None

    def feed(self, text: str) -> None:
        *lines, rest = (self._partial + text).split("\n")
        for line in lines:
            if not self._skipping:
                self._ready.append(self._filtered(line) + "\n")
            self._skipping = False
        self._partial = rest
        if len(self._partial) > LIVE_MAX_LINE:
            self._partial, self._skipping = "", True
        if not self._ready:
            return
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self.flush)

    def close(self) -> None:
        """The command is over: send what is left, including an unfinished last line."""
        if self._partial and not self._skipping:
            self._ready.append(self._filtered(self._partial))
        self._partial = ""
        self.flush()

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._ready:
            text, self._ready = "".join(self._ready), []
            self._last = time.monotonic()
            self._emit(text)

    def _filtered(self, line: str) -> str:
        return self._filter(line) if self._filter is not None else line


class OutputBuffer:
    """Keeps the head and the tail of a stream, within ``cap`` characters of memory-ish.

    Commands can print gigabytes; only the beginning (usually the command's context) and
    the end (usually the error or summary) are worth showing, and memory must stay
    bounded while reading.
    """

    def __init__(self, cap: int) -> None:
        self.cap = max(cap, 0)
        self.head_cap = self.cap // 2
        self.tail_cap = self.cap - self.head_cap
        self.total = 0
        self._head = ""  # first `cap` characters
        self._tail = ""  # last `tail_cap` characters of what did not fit in _head

    def feed(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        room = self.cap - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        if text:
            self._tail = (self._tail + text)[-self.tail_cap :] if self.tail_cap else ""

    def render(self) -> str:
        if self.total <= self.cap:
            return self._head
        tail = (self._head + self._tail)[-self.tail_cap :] if self.tail_cap else ""
        dropped = self.total - self.head_cap - len(tail)
        return f"{self._head[: self.head_cap]}\n... [{dropped} characters truncated] ...\n{tail}"


@dataclass(frozen=True)
class CommandResult:
    output: str  # merged stdout+stderr, already capped
    exit_code: int | None  # None if the command timed out
    timed_out: bool


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg(.., 0) also succeeds while dead members are zombies waiting for a parent to
    # reap them (orphans go to PID 1, which in containers may never reap). On Linux, look
    # at the actual process states so we don't sit out the grace period for the dead.
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read().decode("ascii", "replace")
        except OSError:
            continue
        # Fields after the parenthesised command name: state ppid pgrp ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


async def kill_process_group(pgid: int, grace: float = KILL_GRACE) -> None:
    """SIGTERM the group, wait up to ``grace`` seconds, then SIGKILL what is left.

    If the waiting itself is cancelled, SIGKILL immediately before re-raising: a
    cancelled caller must still not leave processes behind.
    """
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    try:
        while loop.time() < deadline:
            if not _group_alive(pgid):
                return
            await asyncio.sleep(_POLL)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if _group_alive(pgid):
                os.killpg(pgid, signal.SIGKILL)


async def _drain(
    reader: asyncio.StreamReader, buffer: OutputBuffer, live: LiveOutput | None
) -> None:
    # Incremental decoding so a multi-byte character split across reads stays intact.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await reader.read(_READ_CHUNK):
        text = decoder.decode(chunk)
        buffer.feed(text)
        if live is not None:
            live.feed(text)
    text = decoder.decode(b"", final=True)
    buffer.feed(text)
    if live is not None:
        live.feed(text)


async def run_command(
    command: str,
    cwd: Path,
    timeout: float,
    output_cap: int,
    grace: float | None = None,
    on_output: LiveOutput | None = None,
    argv: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> CommandResult:
    """Run ``command`` with bash in ``cwd``; always kills its process group before returning.

    ``grace`` is the SIGTERM-to-SIGKILL delay (default KILL_GRACE, read at call time).
    ``on_output`` receives the output as it is read, and is closed before returning.
    ``argv`` replaces `bash -c command` (the sandbox's bwrap line around it).
    ``env`` is the command's whole environment (default: the server's, with credentials
    dropped; runtime/shell_env.py).
    """
    if grace is None:
        grace = KILL_GRACE
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    try:
        program, *rest = argv if argv is not None else shell_argv(command)
        proc = await asyncio.create_subprocess_exec(
            program,
            *rest,
            cwd=cwd,
            env=dict(env) if env is not None else command_environment(os.environ),
            stdin=subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,  # own session => own process group, pgid == pid
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        # Only the children keep the write end; otherwise we would never see EOF.
        os.close(write_fd)

    pgid = proc.pid
    buffer = OutputBuffer(output_cap)
    reader = asyncio.StreamReader(limit=_READ_CHUNK * 2)
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    transport: asyncio.BaseTransport | None = None
    drain_task: asyncio.Task[None] | None = None
    group_killed = False
    timed_out = False
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        drain_task = asyncio.create_task(_drain(reader, buffer, on_output))
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
        group_killed = True
        await kill_process_group(pgid, grace)
        if timed_out:
            await proc.wait()  # prompt: the group was just SIGKILLed at the latest
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(drain_task), DRAIN_TIMEOUT)
    finally:
        if not group_killed:
            # Cancelled (or failed) before the normal cleanup: still take the group down.
            await kill_process_group(pgid, grace)
        if drain_task is not None and not drain_task.done():
            drain_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await drain_task
        if transport is not None:
            transport.close()  # also closes the pipe file
        else:
            pipe.close()
        if proc.returncode is None:
            # Reap now rather than leave asyncio's child watcher reporting to a loop that
            # may be closed by the time the process is gone.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), grace + 1.0)
        if on_output is not None:
            on_output.close()

    return CommandResult(
        output=buffer.render(),
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
    )


def shell_argv(command: str) -> list[str]:
    return [SHELL, "-c", command]


def format_result(result: CommandResult, timeout: float) -> str:
    output = result.output.rstrip("\n")
    if result.timed_out:
        note = f"Command timed out after {timeout:g}s; its process group was killed."
        return f"{output}\n{note}" if output else note
    code = result.exit_code
    status = f"[exit code: {code}]"
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            status = f"[exit code: {code} (killed by {signal.Signals(-code).name})]"
    return f"{output}\n{status}" if output else f"(no output)\n{status}"


class ExecuteArgs(BaseModel):
    command: str = Field(
        description="Shell command, run with `/bin/bash -c` in the workspace root."
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds before the command is killed (default and maximum are set by "
        "the server; larger values are clamped).",
    )
    unsandboxed: StrictBool = Field(
        default=False,
        description="Run outside the OS sandbox. Only when a sandboxed run failed because of "
        "the sandbox (read-only file system outside the workspace or in .git/, no network) "
        "and the command truly needs that access: the user is asked separately every time, "
        "and runs that approve everything (--yes) refuse it.",
    )
    reason: str | None = Field(
        default=None,
        max_length=2000,
        description="With `unsandboxed`: why the command needs to run without the sandbox "
        "(shown to the user in the approval).",
    )


def _live_output() -> LiveOutput | None:
    """Live `tool_output` events for this call, or None outside a guarded streaming run."""
    target = _LIVE_TARGET.get()
    if target is None:
        return None
    try:
        writer = get_stream_writer()
        # A subagent's tools run one namespace level deeper per `task` ("a|b|c").
        namespace = str(get_config().get("configurable", {}).get("checkpoint_ns", ""))
    except (RuntimeError, KeyError):  # no runnable context, or one outside a graph
        return None
    depth = namespace.count("|")

    def emit(text: str) -> None:
        writer({"type": "tool_output", "id": target.tool_call_id, "text": text, "depth": depth})

    return LiveOutput(emit, target.line_filter)


def build_shell_tools(
    workspace: Workspace,
    *,
    execute_timeout: float = 120.0,
    execute_max_timeout: float = 600.0,
    output_cap: int = 30_000,
    sandbox: ExecuteSandbox | None = None,
) -> list[BaseTool]:
    """The execute tool bound to one workspace and its limits; with `sandbox`, commands
    run in it (no sandbox: unconfined, as in `off` mode)."""

    async def execute(
        command: str,
        timeout: float | None = None,
        unsandboxed: bool = False,
        reason: str | None = None,
    ) -> str:
        with tool_errors():
            if not command.strip():
                raise ToolException("command is empty; pass the shell command to run.")
            if "\x00" in command:
                raise ToolException("command contains a NUL byte, which no shell command can hold.")
            args = {"command": command, "unsandboxed": unsandboxed, "reason": reason}
            refusal = sandbox.refusal(args) if sandbox is not None else None
            if refusal:
                raise ToolException(refusal)
            limit = min(timeout if timeout is not None else execute_timeout, execute_max_timeout)
            shell = shell_argv(command)
            # Read now, not at start: a warm worker takes each client's environment.
            keep = sandbox.keep_env if sandbox is not None else ()
            env = command_environment(os.environ, keep)
            # The checkpoint of what the command may change (runtime/checkpoints): the
            # project's tracked and unignored files before it runs, what changed after.
            async with checkpoint_recorder.around_command(), contextlib.AsyncExitStack() as stack:
                argv = stack.enter_context(sandbox.argv(args, shell)) if sandbox else shell
                result = await run_command(
                    command,
                    workspace.root,
                    limit,
                    output_cap,
                    on_output=_live_output(),
                    argv=argv,
                    env=env,
                )
            text = format_result(result, limit)
            hint = sandbox.hint(args, result.output, result.exit_code) if sandbox else None
            if hint:
                text = f"{text}\n{hint}"
            if result.timed_out:
                # An error status tells the model the command did not finish, not just
                # that it printed something.
                raise ToolException(text)
            return text

    return [
        make_tool(
            "execute",
            "Run a shell command with bash in the workspace root and return its combined "
            "stdout/stderr followed by `[exit code: N]`. stdin is empty (no interactive "
            f"prompts). Default timeout {execute_timeout:g}s, maximum "
            f"{execute_max_timeout:g}s. Output over {output_cap} characters is cut in the "
            "middle. Background processes are killed when the command finishes, so do not "
            "start servers or watchers expecting them to keep running."
            + (
                f" Commands run in an OS sandbox ({sandbox.spec.label()}): outside the "
                "workspace (and in its .git/ and .invincat/) the file system is read-only, "
                "use $TMPDIR for temporary files (private to the command)."
                if sandbox is not None and sandbox.active
                else ""
            ),
            ExecuteArgs,
            execute,
        )
    ]
