"""Async remote subagents against a real local LangGraph API server (`langgraph dev`,
in-memory runtime), started and stopped by the fixture; nothing leaves the machine."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException

from invincat_server.runtime.events import ApprovalRequested
from invincat_server.runtime.extensions.remote_subagents import RemoteTasks, load_remote_agents
from invincat_server.runtime.session import Session
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory

GRAPH = """
import asyncio

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph


async def work(state: MessagesState) -> dict:
    text = state["messages"][-1].content
    if "slow" in text:
        await asyncio.sleep(120)
    return {"messages": [AIMessage(content=f"remote report: {text.upper()}")]}


builder = StateGraph(MessagesState)
builder.add_node("work", work)
builder.add_edge(START, "work")
builder.add_edge("work", END)
graph = builder.compile()
"""
TASK_ID = re.compile(r"Started remote task (\S+) on")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _offline_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith(("LANGSMITH_", "LANGCHAIN_"))
    }
    env.update(
        HOME=str(home),
        LANGGRAPH_CLI_NO_ANALYTICS="1",  # the CLI's usage analytics
        LANGGRAPH_NO_VERSION_CHECK="true",  # the server's PyPI version check
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        # Anything that still tries to go out hits a closed local port instead.
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return env


@pytest.fixture(scope="module")
def langgraph_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    cli = Path(sys.executable).with_name("langgraph")
    assert cli.exists(), "langgraph-cli[inmem] is missing: pip install -e '.[dev]'"
    app = tmp_path_factory.mktemp("langgraph_app")
    (app / "graph.py").write_text(GRAPH)
    (app / "langgraph.json").write_text(
        json.dumps({"dependencies": ["."], "graphs": {"echo": "./graph.py:graph"}})
    )
    port = _free_port()
    log = (app / "server.log").open("w")
    proc = subprocess.Popen(
        [
            str(cli),
            "dev",
            "--no-browser",
            "--no-reload",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=app,
        env=_offline_env(app),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"langgraph dev did not start:\n{(app / 'server.log').read_text()}"
                )
            time.sleep(0.2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        log.close()


def _configure(home: Path, url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "subagents.json").write_text(
        json.dumps(
            {
                "remote": {
                    "echo": {
                        "url": url,
                        "graph_id": "echo",
                        "description": "Upper-cases the task, remotely.",
                    }
                }
            }
        )
    )


async def _turn(session: Session, prompt: str, thread_id: str | None) -> tuple[str, list[Any]]:
    turn = await session.start_turn(prompt, thread_id)
    events: list[Any] = []
    async for event in turn.events():
        events.append(event)
        if isinstance(event, ApprovalRequested):
            assert (await session.resolve(event.approval_id, {"type": "approve"})).resolved
    assert turn.status == "completed", events
    return turn.thread_id, events


def _results(events: list[Any]) -> dict[str, str]:
    return {e.name: e.content for e in events if e.type == "tool_result"}


def _asked(events: list[Any]) -> list[str | None]:
    return [e.tool_name for e in events if e.type == "approval_requested"]


async def test_remote_task_launch_status_result_and_cancel(
    make_session: SessionFactory,
    fake_openai: FakeOpenAIServer,
    invincat_home: Path,
    langgraph_url: str,
) -> None:
    from langgraph_sdk import get_client

    _configure(invincat_home, langgraph_url)
    fake_openai.add_steps(
        [
            {
                "match": {"last_user_contains": "launch fast"},
                "tool_calls": [
                    {
                        "name": "remote_task_start",
                        "arguments": {"agent": "echo", "task": "fast job"},
                    }
                ],
            },
            {
                "match": {"last_user_contains": "launch fast", "has_tool_result": True},
                "content": "started",
            },
        ]
    )
    session = await make_session(auto_approve=False)
    thread_id, events = await _turn(session, "launch fast", None)
    assert _asked(events) == ["remote_task_start"]
    system = fake_openai.chat_requests()[0]["messages"][0]["content"]
    assert "- echo: Upper-cases the task, remotely." in system
    match = TASK_ID.search(_results(events)["remote_task_start"])
    assert match, _results(events)
    fast = match.group(1)

    fake_openai.add_steps(
        [
            {
                "match": {"last_user_contains": "collect"},
                "tool_calls": [{"name": "remote_task_status", "arguments": {"task_id": fast}}],
            },
            {
                "match": {"last_user_contains": "collect"},
                "tool_calls": [
                    {
                        "name": "remote_task_result",
                        "arguments": {"task_id": fast, "wait_seconds": 30},
                    }
                ],
            },
            {"match": {"last_user_contains": "collect"}, "content": "collected"},
        ]
    )
    _, events = await _turn(session, "collect", thread_id)
    assert _asked(events) == []  # status and result only read
    results = _results(events)
    assert re.fullmatch(
        rf"Remote task {re.escape(fast)}: (pending|running|success)\.",
        results["remote_task_status"],
    )
    assert results["remote_task_result"] == (
        f"Remote task {fast} finished.\nremote report: FAST JOB"
    )

    fake_openai.add_steps(
        [
            {
                "match": {"last_user_contains": "launch slow"},
                "tool_calls": [
                    {
                        "name": "remote_task_start",
                        "arguments": {"agent": "echo", "task": "slow job"},
                    }
                ],
            },
            {"match": {"last_user_contains": "launch slow"}, "content": "started slow"},
        ]
    )
    _, events = await _turn(session, "launch slow", thread_id)
    slow = TASK_ID.search(_results(events)["remote_task_start"]).group(1)  # type: ignore[union-attr]
    _, remote_thread, remote_run = slow.split(":")
    client = get_client(url=langgraph_url, api_key=None)
    deadline = time.monotonic() + 20
    while (await client.runs.get(remote_thread, remote_run))["status"] != "running":
        assert time.monotonic() < deadline, "the slow run never started"
        await asyncio.sleep(0.1)

    fake_openai.add_steps(
        [
            {
                "match": {"last_user_contains": "stop it"},
                "tool_calls": [{"name": "remote_task_cancel", "arguments": {"task_id": slow}}],
            },
            {
                "match": {"last_user_contains": "stop it"},
                "tool_calls": [{"name": "remote_task_result", "arguments": {"task_id": slow}}],
            },
            {"match": {"last_user_contains": "stop it"}, "content": "stopped"},
        ]
    )
    _, events = await _turn(session, "stop it", thread_id)
    assert _asked(events) == ["remote_task_cancel"]
    results = _results(events)
    assert results["remote_task_cancel"] == f"Cancelled remote task {slow}; status: interrupted."
    assert results["remote_task_result"] == (
        f"Remote task {slow} ended with status interrupted; it produced no report."
    )
    assert (await client.runs.get(remote_thread, remote_run))["status"] == "interrupted"
    await client.aclose()


def test_project_config_cannot_name_a_key_and_bad_entries_are_reported(
    invincat_home: Path, workspace: Path
) -> None:
    (workspace / ".invincat").mkdir()
    (workspace / ".invincat" / "subagents.json").write_text(
        json.dumps(
            {
                "remote": {
                    "proj": {"url": "http://127.0.0.1:1", "graph_id": "g", "api_key_env": "SECRET"},
                    "typo": {"url": "http://127.0.0.1:1", "graph": "g"},
                    "ftp": {"url": "ftp://example", "graph_id": "g"},
                    "shared": {"url": "http://127.0.0.1:2", "graph_id": "project"},
                }
            }
        )
    )
    invincat_home.mkdir(exist_ok=True)
    (invincat_home / "subagents.json").write_text(
        json.dumps({"remote": {"shared": {"url": "http://127.0.0.1:3", "graph_id": "user"}}})
    )
    notices: list[str] = []
    agents = load_remote_agents(invincat_home, workspace, notices.append)
    assert sorted(agents) == ["proj", "shared"]
    assert agents["proj"].config.api_key_env is None
    assert agents["shared"].config.graph_id == "user"  # the user file wins
    assert any("api_key_env is ignored in a project file" in n for n in notices)
    assert any("'typo'" in n and "graph_id: Field required" in n for n in notices)
    assert any("'ftp'" in n and "url must start with http" in n for n in notices)


async def test_no_ambient_api_key_is_sent_and_http_errors_are_clear(
    fake_openai: FakeOpenAIServer,
    invincat_home: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fake model server records any request: stand in for a hostile deployment.
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2-secret")
    url = fake_openai.base_url.removesuffix("/v1")
    _configure(invincat_home, url)
    tasks = RemoteTasks(load_remote_agents(invincat_home, workspace, print))
    with pytest.raises(ToolException, match=r"refused to create a thread: HTTP 404"):
        await tasks.start("echo", "hello")
    [request] = [r for r in fake_openai.requests if r.path == "/threads"]
    assert "x-api-key" not in request.headers
    assert "lsv2-secret" not in json.dumps(request.headers)
    await tasks.aclose()

    (invincat_home / "subagents.json").write_text(
        json.dumps(
            {"remote": {"gone": {"url": f"http://127.0.0.1:{_free_port()}", "graph_id": "g"}}}
        )
    )
    tasks = RemoteTasks(load_remote_agents(invincat_home, workspace, print))
    with pytest.raises(
        ToolException, match=r"Cannot reach the remote agent gone at http://127\.0\.0\.1"
    ):
        await tasks.start("gone", "hello")
    await tasks.aclose()
