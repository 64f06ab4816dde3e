"""Tool calls as tool_call / tool_call_update, approvals as session/request_permission."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import DEADLINE
from tests.acp.conftest import Agent


def _write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def _run(command: str) -> dict:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command}}]}


async def _prompt(agent: Agent, text: str):
    return await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block(text)])


def _tool_messages(server: FakeOpenAIServer) -> list[dict]:
    return [m for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]


async def test_allow_once_writes_and_the_client_saw_the_diff(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("old line\n")
    fake_openai.add_steps([_write("notes.txt", "new line\n"), {"content": "Wrote it."}])
    await agent.client.answers.put("allow_once")
    answer = await _prompt(agent, "update notes")
    assert answer.stop_reason == "end_turn"
    assert (workspace / "notes.txt").read_text() == "new line\n"

    [start] = agent.client.of_kind("tool_call")
    assert start.kind == "edit" and start.title == "Write notes.txt"
    assert start.locations[0].path == str(workspace / "notes.txt")
    [diff] = [c for c in start.content if c.type == "diff"]
    assert (diff.old_text, diff.new_text) == ("old line\n", "new line\n")

    [asked] = agent.client.permission_requests
    assert [o.kind for o in asked["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    always = asked["options"][1].name
    assert str(workspace.resolve()) in always and "remembered across sessions" in always
    assert any(c.type == "diff" for c in asked["tool_call"].content)

    statuses = [u.status for u in agent.client.of_kind("tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    assert agent.client.text() == "Wrote it."


async def test_reject_once_leaves_the_file_alone(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps([_write("notes.txt", "hello\n"), {"content": "OK, I will not."}])
    await agent.client.answers.put("reject_once")
    answer = await _prompt(agent, "write notes")
    assert answer.stop_reason == "end_turn"
    assert not (workspace / "notes.txt").exists()
    [result] = agent.client.of_kind("tool_call_update")
    assert result.status == "failed"
    [tool_message] = _tool_messages(fake_openai)
    assert "reject" in tool_message["content"].lower()


async def test_a_command_no_rule_may_cover_offers_no_allow_always(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    victim = workspace.parent / "victim"
    victim.mkdir()
    fake_openai.add_steps([_run("rm -rf ../victim"), {"content": "Not run."}])
    await agent.client.answers.put("reject_once")
    await _prompt(agent, "remove it")
    [asked] = agent.client.permission_requests
    assert [o.kind for o in asked["options"]] == ["allow_once", "reject_once", "reject_always"]
    assert asked["options"][-1].name == (
        "Reject, and reject `execute` calls offered no 'always' rule for the rest of this session"
    )
    assert victim.exists()


async def test_a_cancelled_permission_request_is_a_rejection(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps([_run("touch ran.txt"), {"content": "Not run."}])
    await agent.client.answers.put(None)  # the client answers "cancelled"
    answer = await _prompt(agent, "run it")
    assert answer.stop_reason == "end_turn"
    assert not (workspace / "ran.txt").exists()
    assert agent.client.of_kind("tool_call_update")[-1].status == "failed"


async def test_allow_always_is_the_workspace_rule_and_reject_always_stops_asking(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path, invincat_home: Path
) -> None:
    fake_openai.add_steps(
        [
            _write("a.txt", "A\n"),
            {"content": "first"},
            _write("b.txt", "B\n"),
            {"content": "second, not asked"},
        ]
    )
    await agent.client.answers.put("allow_always")
    await _prompt(agent, "write a")
    await _prompt(agent, "write b")
    assert (workspace / "b.txt").read_text() == "B\n"
    assert len(agent.client.permission_requests) == 1
    rules = json.loads((invincat_home / "approvals.json").read_text())["workspaces"]
    assert [r["tool"] for r in rules[str(workspace.resolve())]] == ["file_writes"]

    fake_openai.add_steps(
        [
            _run("touch one.txt"),
            {"content": "rejected"},
            _run("touch two.txt"),
            {"content": "rejected again, without asking"},
        ]
    )
    await agent.client.answers.put("reject_always")
    await _prompt(agent, "run one")
    await _prompt(agent, "run two")
    assert len(agent.client.permission_requests) == 2
    assert not (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
    assert agent.client.of_kind("tool_call_update")[-1].status == "failed"


async def test_reject_always_answers_the_calls_of_its_batch_it_covers(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    # Two `rm` calls in one model message: one batch. The client answers the first
    # "reject always"; the second is answered by the rule, never sent as a request (had it
    # been, the scripted client would wait for an answer that never comes).
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text("keep\n")
    calls = [
        {"name": "execute", "arguments": {"command": f"rm {name}"}} for name in ("a.txt", "b.txt")
    ]
    fake_openai.add_steps([{"tool_calls": calls}, {"content": "nothing removed"}])
    await agent.client.answers.put("reject_always")
    answer = await asyncio.wait_for(_prompt(agent, "remove both"), DEADLINE)
    assert answer.stop_reason == "end_turn"
    [asked] = agent.client.permission_requests
    assert "rm a.txt" in str(asked["tool_call"].raw_input)
    assert [u.status for u in agent.client.of_kind("tool_call_update")] == ["failed", "failed"]
    assert all("rejected" in m["content"] for m in _tool_messages(fake_openai))
    assert all((workspace / name).read_text() == "keep\n" for name in ("a.txt", "b.txt"))


async def test_cancel_while_a_command_runs(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps([_run("sleep 120 && touch late.txt"), {"content": "unused"}])
    await agent.client.answers.put("allow_once")
    prompt = asyncio.ensure_future(_prompt(agent, "run the slow thing"))
    await agent.client.wait_for(
        lambda: any(u.status == "in_progress" for u in agent.client.of_kind("tool_call_update"))
    )
    await agent.conn.cancel(session_id=agent.session_id)
    answer = await asyncio.wait_for(prompt, DEADLINE)
    assert answer.stop_reason == "cancelled"
    assert not (workspace / "late.txt").exists()


async def test_session_cancel_during_a_permission_request_approves_nothing(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps([_run("touch ran.txt"), {"content": "unused"}])
    prompt = asyncio.ensure_future(_prompt(agent, "run it"))
    await agent.client.wait_for(lambda: agent.client.permission_requests)
    await agent.conn.cancel(session_id=agent.session_id)
    answer = await asyncio.wait_for(prompt, DEADLINE)
    await agent.client.answers.put(None)  # the client then answers "cancelled", as it must
    assert answer.stop_reason == "cancelled"
    assert not (workspace / "ran.txt").exists()


async def test_titles_and_kinds_come_from_the_phrase_book_with_arguments_redacted(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    """The title of each call is its `summary` in every other front end (one line, the
    arguments redacted), also in the permission request; `rawInput` is the call as asked."""
    (workspace / "notes.txt").write_text("n\n")
    key = "sk-proj-" + "a1B2c3D4" * 6
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"tool_calls": [{"name": "grep", "arguments": {"pattern": "TODO", "path": "src"}}]},
            _run(f"curl -H 'Authorization: Bearer {key}'\x1b[2J https://example.com"),
            {"content": "Done."},
        ]
    )
    await agent.client.answers.put("reject_once")
    answer = await _prompt(agent, "look")
    assert answer.stop_reason == "end_turn"

    starts = agent.client.of_kind("tool_call")
    assert [(s.kind, s.title) for s in starts[:2]] == [
        ("read", "Read notes.txt"),
        ("search", "Search for `TODO` in src"),
    ]
    run = starts[2]
    assert run.kind == "execute" and len(run.title) <= 80 and run.title.endswith("…")
    assert run.title.startswith("Run `curl -H 'Authorization: Bearer [REDACTED:openai_key]' [2J")
    [asked] = agent.client.permission_requests
    assert asked["tool_call"].title == starts[2].title and asked["tool_call"].kind == "execute"
    assert key in asked["tool_call"].raw_input["command"]  # a person decides on the call itself
