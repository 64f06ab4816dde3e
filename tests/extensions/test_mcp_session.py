"""MCP servers in an in-process Session: HTTP transport, auto-approve, tool errors, a
server that dies mid-session or never starts, and shutdown with the session."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from invincat_server.runtime.session import Session
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.extensions.conftest import (
    HttpMcpServer,
    SessionFactory,
    drive,
    stdio_entry,
    tool_messages,
    tool_names,
    write_config,
)


def _call(name: str, **args: object) -> dict:
    return {"name": name, "arguments": args}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes (its parent has not reaped it yet).
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


async def test_streamable_http_tool_asks_its_result_reaches_the_model_and_loss_is_reported(
    fake_openai: FakeOpenAIServer,
    invincat_home: Path,
    open_session: SessionFactory,
    http_mcp_server: HttpMcpServer,
) -> None:
    write_config(invincat_home / "mcp.json", {"web": {"url": http_mcp_server.url}})
    fake_openai.add_steps(
        [
            {"match": {"last_user_contains": "first"},
             "tool_calls": [_call("web__echo", text="over http", times=1)]},
            {"match": {"last_user_contains": "second"},
             "tool_calls": [_call("web__echo", text="still there?")]},
            {"match": {"has_tool_result": True}, "content": "done", "times": 2},
        ]
    )  # fmt: skip
    session = await open_session()
    events = await drive(session, "first")
    assert "web__echo" in tool_names(fake_openai.chat_requests()[0])
    assert [e.tool_name for e in events if e.type == "approval_requested"] == ["web__echo"]
    [result] = [e for e in events if e.type == "tool_result"]
    assert (result.status, result.content) == ("success", "over http")
    assert any(m["content"] == "over http" for m in tool_messages(fake_openai.chat_requests()))

    # The server goes away: the next call fails cleanly, the user is told, the turn ends.
    http_mcp_server.proc.kill()
    http_mcp_server.proc.wait(timeout=10)
    events = await drive(session, "second")
    [result] = [e for e in events if e.type == "tool_result"]
    assert result.status == "error" and "MCP server 'web' is unavailable" in result.content
    assert any("MCP server 'web' stopped" in e.message for e in events if e.type == "error")
    assert events[-1].status == "completed"


async def test_auto_approve_per_tool_and_wildcard_from_user_config(
    fake_openai: FakeOpenAIServer, invincat_home: Path, open_session: SessionFactory
) -> None:
    write_config(
        invincat_home / "mcp.json",
        {
            "demo": stdio_entry(name="demo", autoApprove=["echo"]),
            "all": stdio_entry(name="all", autoApprove=["*"]),
        },
    )
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    _call("demo__echo", text="free"),
                    _call("demo__whoami"),
                    _call("all__whoami"),
                    _call("all__fail", reason="on purpose"),
                ]
            },
            {"match": {"has_tool_result": True}, "content": "ok"},
        ]
    )
    session = await open_session()
    events = await drive(session, "go")
    assert [e.tool_name for e in events if e.type == "approval_requested"] == ["demo__whoami"]
    results = {e.name: e for e in events if e.type == "tool_result"}
    assert results["demo__echo"].content == "free"
    assert results["all__fail"].status == "error" and "on purpose" in results["all__fail"].content
    pids = [int(results[n].content.split()[1]) for n in ("demo__whoami", "all__whoami")]
    assert all(_pid_alive(pid) for pid in pids)

    await session.close()  # the servers stop with the session
    assert not any(_pid_alive(pid) for pid in pids)


async def test_killed_server_is_reported_and_the_session_goes_on_without_it(
    fake_openai: FakeOpenAIServer,
    invincat_home: Path,
    workspace: Path,
    open_session: SessionFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (workspace / "README.md").write_text("hi\n")
    write_config(invincat_home / "mcp.json", {"demo": stdio_entry(autoApprove=["*"])})
    # The session tells the user through `notify` once the client noticed the dead server:
    # that is the event to wait for (a fixed sleep is too short on a loaded machine).
    stopped = asyncio.Event()
    notify = Session.notify

    def notify_and_signal(self: Session, message: str) -> None:
        notify(self, message)
        if "MCP server 'demo' stopped" in message:
            stopped.set()

    monkeypatch.setattr(Session, "notify", notify_and_signal)
    fake_openai.add_steps(
        [
            {"match": {"last_user_contains": "first"}, "tool_calls": [_call("demo__whoami")]},
            {"match": {"last_user_contains": "second"}, "tool_calls": [
                _call("demo__echo", text="anyone?"), _call("ls")]},
            {"match": {"has_tool_result": True}, "content": "ok", "times": 2},
        ]
    )  # fmt: skip
    session = await open_session()
    first = await drive(session, "first")
    [whoami] = [e for e in first if e.type == "tool_result"]
    os.kill(int(whoami.content.split()[1]), signal.SIGKILL)
    await asyncio.wait_for(stopped.wait(), DEADLINE)  # the client noticed the closed pipe

    second = await drive(session, "second")
    errors = [e.message for e in second if e.type == "error"]
    assert any("MCP server 'demo' stopped" in m for m in errors), errors
    results = {e.name: e for e in second if e.type == "tool_result"}
    assert results["demo__echo"].status == "error"
    assert "MCP server 'demo' is unavailable" in results["demo__echo"].content
    assert results["ls"].status == "success" and "README.md" in results["ls"].content
    assert second[-1].status == "completed"
    # Its tools are no longer offered to the model.
    last = fake_openai.chat_requests()[-1]
    assert "ls" in tool_names(last) and not any(n.startswith("demo__") for n in tool_names(last))


async def test_servers_that_fail_to_start_are_reported_and_the_session_works(
    fake_openai: FakeOpenAIServer, invincat_home: Path, open_session: SessionFactory
) -> None:
    crash = "import sys; print('bad token in config', file=sys.stderr); sys.exit(3)"
    write_config(
        invincat_home / "mcp.json",
        {
            "missing": {"command": "/nonexistent/mcp-server"},
            "crashes": {"command": sys.executable, "args": ["-c", crash]},
            "broken": {"args": ["no command"]},
            "hangs": {
                "command": sys.executable,
                "args": ["-c", "import time; time.sleep(60)"],
                "startupTimeout": 0.5,
            },
            "good": stdio_entry(name="good"),
        },
    )
    fake_openai.add_steps([{"content": "hello"}])
    session = await open_session()
    events = await drive(session, "hi")
    errors = [e.message for e in events if e.type == "error"]
    assert any("'missing' failed to start" in m for m in errors), errors
    assert any("'crashes'" in m and "bad token in config" in m for m in errors), errors
    assert any("'broken'" in m and "command" in m for m in errors), errors
    assert any("'hangs' did not finish starting within 0.5s" in m for m in errors), errors
    assert events[-1].status == "completed"
    names = tool_names(fake_openai.chat_requests()[0])
    assert "good__echo" in names and not any(n.startswith("missing__") for n in names)
