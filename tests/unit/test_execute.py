"""execute: results, limits, and that no process outlives the call."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.tools import build_core_tools, shell


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "ws"
    directory.mkdir()
    return directory


def make_execute(root: Path, **options: Any) -> BaseTool:
    tools = {tool.name: tool for tool in build_core_tools(Workspace(root), **options)}
    return tools["execute"]


@pytest.fixture
def execute(root: Path) -> BaseTool:
    return make_execute(root)


async def run(tool: BaseTool, **args: Any) -> ToolMessage:
    message = await tool.ainvoke({"type": "tool_call", "id": "1", "name": tool.name, "args": args})
    assert isinstance(message, ToolMessage)
    assert isinstance(message.content, str)
    return message


def alive(pid: int) -> bool:
    """True if the process exists and is not a zombie (dead, waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            stat = handle.read()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rfind(")") + 2] not in "ZX"


def wait_dead(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


async def test_output_and_exit_code(execute: BaseTool) -> None:
    message = await run(execute, command="echo hello; exit 3")
    assert message.status == "success"
    assert message.content == "hello\n[exit code: 3]"


async def test_stderr_is_merged_in_order(execute: BaseTool) -> None:
    message = await run(execute, command="echo out; echo err >&2; echo out2")
    assert message.content == "out\nerr\nout2\n[exit code: 0]"


async def test_no_output(execute: BaseTool) -> None:
    message = await run(execute, command="true")
    assert message.content.endswith("[exit code: 0]")


async def test_runs_in_workspace_root_with_empty_stdin(execute: BaseTool, root: Path) -> None:
    message = await run(execute, command="pwd; cat; echo done")
    assert message.content == f"{root.resolve()}\ndone\n[exit code: 0]"


async def test_timeout_kills_the_process_group(execute: BaseTool, root: Path) -> None:
    started = time.monotonic()
    message = await run(
        execute, command="sleep 300 & echo $! > child.pid; echo started; sleep 300", timeout=0.5
    )
    assert time.monotonic() - started < 5
    assert message.status == "error"
    assert "started" in message.content
    assert "timed out after 0.5s" in message.content
    assert "process group was killed" in message.content
    assert wait_dead(int((root / "child.pid").read_text()))


async def test_timeout_is_clamped_to_the_maximum(root: Path) -> None:
    execute = make_execute(root, execute_timeout=30, execute_max_timeout=0.3)
    started = time.monotonic()
    message = await run(execute, command="sleep 30", timeout=100)
    assert time.monotonic() - started < 5
    assert "timed out after 0.3s" in message.content


async def test_output_cap_keeps_head_and_tail(root: Path) -> None:
    execute = make_execute(root, output_cap=1000)
    message = await run(execute, command="echo HEAD; seq 1 20000; echo TAIL")
    text = message.content
    assert text.startswith("HEAD\n1\n2\n")
    assert text.endswith("20000\nTAIL\n[exit code: 0]")
    assert "characters truncated] ..." in text
    assert len(text) < 1200
    total = len("HEAD\n") + sum(len(f"{i}\n") for i in range(1, 20001)) + len("TAIL\n")
    assert f"... [{total - 1000} characters truncated] ..." in text


async def test_background_child_does_not_hang_and_is_killed(execute: BaseTool) -> None:
    started = time.monotonic()
    message = await run(execute, command="sleep 300 & echo $!")
    assert time.monotonic() - started < 5
    pid = int(message.content.splitlines()[0])
    assert message.content.endswith("[exit code: 0]")
    assert wait_dead(pid)


async def test_cancelling_the_call_kills_the_group(execute: BaseTool, root: Path) -> None:
    task = asyncio.create_task(
        run(execute, command="sleep 300 & echo $! > child.pid; echo $$ > main.pid; wait")
    )
    deadline = time.monotonic() + 5
    while not ((root / "child.pid").exists() and (root / "main.pid").exists()):
        assert time.monotonic() < deadline, "command did not start"
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.05)  # let the pid files be fully written
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_dead(int((root / "child.pid").read_text()))
    assert wait_dead(int((root / "main.pid").read_text()))


async def test_empty_command_is_an_error(execute: BaseTool) -> None:
    message = await run(execute, command="   ")
    assert message.status == "error"
    assert "empty" in message.content


async def test_a_nul_byte_is_an_error_not_a_crash(execute: BaseTool) -> None:
    message = await run(execute, command="echo a\x00b")
    assert message.status == "error" and "NUL byte" in message.content


async def test_plain_invoke_returns_text(execute: BaseTool) -> None:
    assert await execute.ainvoke({"command": "echo hi"}) == "hi\n[exit code: 0]"


async def test_sigterm_ignoring_child_is_sigkilled(
    execute: BaseTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "KILL_GRACE", 0.3)
    started = time.monotonic()
    message = await run(execute, command="trap '' TERM; sleep 300 & echo $!")
    assert time.monotonic() - started < 3
    assert wait_dead(int(message.content.splitlines()[0]))


async def test_process_escaping_the_group_cannot_hang_the_call(
    execute: BaseTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # setsid puts the child in a new session: it survives the group kill and keeps the
    # output pipe open. The call must still return (it stops reading after a short wait).
    monkeypatch.setattr(shell, "DRAIN_TIMEOUT", 0.2)
    started = time.monotonic()
    message = await run(execute, command="setsid sleep 30 & echo $!")
    pid = int(message.content.splitlines()[0])
    try:
        assert time.monotonic() - started < 3
        assert message.content.endswith("[exit code: 0]")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
