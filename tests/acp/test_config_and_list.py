"""Modes as a `configOptions` select (`session/set_config_option`), beside `modes` for
older clients, and `session/list` (codecompanion's `/resume`): this project's threads,
newest first, with titles, a page at a time."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from acp import RequestError, text_block

from invincat_server.runtime.records import Records
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import ScriptedClient
from tests.acp.conftest import Agent

PLAN = [{"content": "Create hello.txt"}]


def _call(name: str, **args: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _error_for(client: ScriptedClient, request_id: object) -> dict | None:
    for message in client.incoming:
        if "error" in message and message.get("id") == request_id:
            return message["error"]
    return None


async def test_the_mode_config_option_switches_to_plan_mode(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    [option] = session.config_options
    assert (option.id, option.category, option.current_value) == (
        "mode",
        "mode",
        "agent",
    )
    assert [o.value for o in option.options] == ["agent", "plan"]
    assert session.modes.current_mode_id == "agent"  # older clients keep `modes`

    answer = await agent.conn.set_config_option(
        config_id="mode", session_id=session.session_id, value="plan"
    )
    assert answer.config_options[0].current_value == "plan"
    client = agent.client
    await client.wait_for(lambda: client.of_kind("config_option_update"))
    assert client.of_kind("current_mode_update")[-1].current_mode_id == "plan"

    fake_openai.add_steps([_call("write_todos", todos=PLAN), _call("approve_plan", todos=PLAN)])
    await client.answers.put("reject_always")
    await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("add hello")])
    [request] = client.permission_requests
    assert request["tool_call"].title == "Approve this plan?"  # the planner ran

    # set_mode (older clients) keeps the config option in step too.
    await agent.conn.set_session_mode(session_id=session.session_id, mode_id="agent")
    await client.wait_for(
        lambda: (
            client.of_kind("config_option_update")[-1].config_options[0].current_value == "agent"
        )
    )


@pytest.mark.parametrize(
    ("params", "code", "words"),
    [
        ({"configId": "model", "value": "plan"}, -32602, "Unknown config option"),
        ({"configId": "mode", "value": "yolo"}, -32602, "agent, plan"),
        ({"configId": "mode", "value": True, "type": "boolean"}, -32602, "agent, plan"),
        ({"configId": "mode", "value": None}, -32602, ""),
        ({"configId": "mode", "value": "pl\x00an"}, -32602, "agent, plan"),
        ({"configId": "mode"}, -32602, ""),
        ({"configId": "mode", "value": "x" * 100_000}, -32602, "agent, plan"),
    ],
)
async def test_a_bad_config_option_is_a_clear_error_and_changes_nothing(
    agent: Agent, params: dict, code: int, words: str
) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": "bad",
        "method": "session/set_config_option",
        "params": {"sessionId": agent.session_id, **params},
    }
    agent.process.stdin.write(json.dumps(message).encode() + b"\n")
    await agent.process.stdin.drain()
    error = await agent.client.wait_for(lambda: _error_for(agent.client, "bad"))
    assert error["code"] == code and words in json.dumps(error)
    assert len(json.dumps(error)) < 2_000  # a huge value is not echoed back
    assert not agent.client.of_kind("config_option_update")


async def test_session_list_shows_this_projects_threads_newest_first(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "one"}, {"content": "two"}])
    (workspace / "sub").mkdir()
    await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block("first question")])
    second = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    await agent.conn.prompt(session_id=second.session_id, prompt=[text_block("second question")])
    other = workspace.parent / "other"
    (other / ".git").mkdir(parents=True)
    await agent.conn.new_session(cwd=str(other), mcp_servers=[])  # never prompted: not saved

    listed = await agent.conn.list_sessions(cwd=str(workspace / "sub"))
    assert [(s.session_id, s.title) for s in listed.sessions] == [
        (second.session_id, "second question"),
        (agent.session_id, "first question"),
    ]
    assert {s.cwd for s in listed.sessions} == {str(workspace.resolve())}
    assert listed.next_cursor is None
    assert (await agent.conn.list_sessions(cwd=str(other))).sessions == []


async def test_session_list_pages_and_refuses_a_cursor_it_did_not_make(
    agent: Agent, workspace: Path, invincat_env: dict[str, str]
) -> None:
    records = await Records.open(Path(invincat_env["INVINCAT_HOME"]) / "threads.sqlite")
    try:
        for index in range(120):
            await records.touch_thread(f"t_{index:03}", f"thread {index}", str(workspace.resolve()))
    finally:
        await records.close()
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await agent.conn.list_sessions(cwd=str(workspace), cursor=cursor)
        seen += [s.session_id for s in page.sessions]
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == 3 and len(seen) == len(set(seen)) == 120
    for bad in ("abc", "-1", "9" * 40):
        with pytest.raises(RequestError) as caught:
            await agent.conn.list_sessions(cwd=str(workspace), cursor=bad)
        assert caught.value.code == -32602 and "cursor" in str(caught.value)
    for bad_cwd in ("relative/dir", "/tmp/a\x00b", "/" + "x" * 100_000, str(workspace / "nope")):
        with pytest.raises(RequestError) as caught:
            await agent.conn.list_sessions(cwd=bad_cwd)
        assert caught.value.code == -32602 and "cwd must be" in str(caught.value)
        assert len(str(caught.value)) < 2_000
    assert len((await agent.conn.list_sessions(cwd=str(workspace))).sessions) == 50  # still up


async def test_initialize_advertises_session_list(agent: Agent) -> None:
    from acp import PROTOCOL_VERSION

    from tests.acp.client import capabilities

    init = await agent.conn.initialize(
        protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities()
    )
    assert init.agent_capabilities.session_capabilities.list is not None


async def _saved(home: Path, rows: list[tuple[object, str, str, str]]) -> None:
    """Threads written straight into the threads file (thread id, title, workspace,
    updated_at), as a hand edit or another version could leave them."""
    import sqlite3

    await (await Records.open(home / "threads.sqlite")).close()  # the tables
    with contextlib.closing(sqlite3.connect(home / "threads.sqlite")) as conn, conn:
        conn.executemany(
            "INSERT INTO invincat_threads VALUES (?, ?, ?, ?, ?)",
            [(tid, title, ws, stamp, stamp) for tid, title, ws, stamp in rows],
        )


async def test_session_list_without_cwd_is_every_projects_and_leaves_the_session_open(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path, invincat_env: dict[str, str]
) -> None:
    other = workspace.parent / "other"
    (other / ".git").mkdir(parents=True)
    root = str(workspace.resolve())
    await _saved(
        Path(invincat_env["INVINCAT_HOME"]),
        [
            ("t_here", "here", root, "2026-01-01T00:00:00+00:00"),
            ("t_there", "there", str(other.resolve()), "2026-01-02T00:00:00+00:00"),
        ],
    )
    everywhere = await agent.conn.list_sessions()
    assert [(s.session_id, s.cwd) for s in everywhere.sessions] == [
        ("t_there", str(other.resolve())),
        ("t_here", root),
    ]
    # Listing the project of an open session borrows its Project and lets go: the
    # session's shared Project (and its Session) stays open for the next prompt.
    here = await agent.conn.list_sessions(cwd=str(workspace))
    assert [s.session_id for s in here.sessions] == ["t_here"]
    fake_openai.add_steps([{"content": "still here"}])
    answer = await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block("hi")])
    assert answer.stop_reason == "end_turn"
    listed = await agent.conn.list_sessions(cwd=str(workspace))
    assert [s.session_id for s in listed.sessions] == [agent.session_id, "t_here"]


async def test_session_list_a_bad_row_costs_that_thread_only_and_a_link_is_its_root(
    agent: Agent, workspace: Path, invincat_env: dict[str, str]
) -> None:
    root = str(workspace.resolve())
    await _saved(
        Path(invincat_env["INVINCAT_HOME"]),
        [
            ("t_old", "old", root, "2026-01-01T00:00:00+00:00"),
            (b"\xff\xfe", "bytes for an id, not text", root, "2026-01-02T00:00:00+00:00"),
            ("t_new", "new\x00" + "x" * 10_000, root, "2026-01-03T00:00:00+00:00"),
        ],
    )
    link = workspace.parent / "link"
    link.symlink_to(workspace, target_is_directory=True)
    listed = await agent.conn.list_sessions(cwd=str(link))
    assert [s.session_id for s in listed.sessions] == ["t_new", "t_old"]
    assert {s.cwd for s in listed.sessions} == {root}
    # A hand-written title reaches the client as JSON text, whole, as it was stored.
    assert listed.sessions[0].title == "new\x00" + "x" * 10_000
