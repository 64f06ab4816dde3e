"""ACP's `/rewind` (docs/acp.md): the real `invincat --acp` process and the scripted model.
A turn writes a file; `/rewind` lists the turn without a model call; `/rewind 1 code`
shows the diff and asks; cancel leaves the file, rewind restores it byte for byte; a file
changed by hand is kept unless "Overwrite PATH" is chosen; the conversation part makes
the thread forget the turn; bad arguments and a running turn change nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import DEADLINE
from tests.acp.conftest import Agent

ORIGINAL = b"first line\r\nsecond \xe2\x9c\x93\nno final newline"
"""Bytes a careless text round trip would change (CRLF, UTF-8, no final newline)."""


def _write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


async def _prompt(agent: Agent, text: str) -> Any:
    return await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block(text)])


async def _said(agent: Agent, text: str) -> str:
    """The agent text one command answered (no model call)."""
    before = len(agent.client.text())
    answer = await _prompt(agent, text)
    assert answer.stop_reason == "end_turn"
    return agent.client.text()[before:]


async def _turn_that_writes(fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path) -> None:
    (workspace / "notes.txt").write_bytes(ORIGINAL)
    (workspace / "notes.txt").chmod(0o640)
    fake_openai.add_steps([_write("notes.txt", "rewritten\n"), {"content": "Wrote it."}])
    await agent.client.answers.put("allow_once")
    assert (await _prompt(agent, "rewrite the notes")).stop_reason == "end_turn"
    assert (workspace / "notes.txt").read_text() == "rewritten\n"


async def test_rewind_lists_asks_and_restores_the_file_byte_identical(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    await agent.client.wait_for(lambda: agent.client.of_kind("available_commands_update"))
    [commands] = agent.client.of_kind("available_commands_update")
    [rewind] = [c for c in commands.available_commands if c.name == "rewind"]
    assert rewind.input.root.hint == "turn number, then code|conversation|both"

    await _turn_that_writes(fake_openai, agent, workspace)
    model_calls = len(fake_openai.chat_requests())
    listing = await _said(agent, "/rewind")
    assert "1. rewrite the notes — `notes.txt`" in listing

    # Cancel: asked, nothing changes.
    await agent.client.answers.put("cancel")
    shown = await _said(agent, "/rewind 1 code")
    [_write_asked, asked] = agent.client.permission_requests
    assert [(o.option_id, o.kind) for o in asked["options"]] == [
        ("rewind", "allow_once"),
        ("cancel", "reject_once"),
    ]
    assert asked["options"][0].name == "Rewind: restore 1 file"
    assert asked["tool_call"].title == "Rewind to before turn 1 (code)"
    assert "- modify `notes.txt`" in shown and "-rewritten" in shown
    assert "Not rewound: nothing was changed." in shown
    assert (workspace / "notes.txt").read_text() == "rewritten\n"

    # Rewind: the bytes and the mode as before the turn.
    await agent.client.answers.put("rewind")
    done = await _said(agent, "/rewind 1 code")
    assert (workspace / "notes.txt").read_bytes() == ORIGINAL
    assert (workspace / "notes.txt").stat().st_mode & 0o777 == 0o640
    assert "Restored 1 file: `notes.txt`." in done
    assert f"invincat rewind {agent.session_id} --undo" in done
    assert len(agent.client.permission_requests) == 3
    assert len(fake_openai.chat_requests()) == model_calls  # no model call for any of it

    # The conversation part: the thread forgets the turn, the model no longer sees it.
    await agent.client.answers.put("rewind")
    forgot = await _said(agent, "/rewind 1 conversation")
    assert "The thread forgot those turns" in forgot
    fake_openai.add_steps([{"content": "Fresh start."}])
    await _prompt(agent, "hello again")
    messages = fake_openai.chat_requests()[-1]["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["hello again"]


async def test_a_file_changed_by_hand_is_kept_unless_overwrite_is_chosen(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    await _turn_that_writes(fake_openai, agent, workspace)
    (workspace / "notes.txt").write_text("my own edit\n")

    for answer in ("rewind", "keep"):
        await agent.client.answers.put(answer)
    kept = await _said(agent, "/rewind 1")
    conflict = agent.client.permission_requests[-1]
    assert conflict["tool_call"].title == "notes.txt changed since Invincat wrote it: overwrite it?"
    assert [o.name for o in conflict["options"]] == [
        "Overwrite notes.txt",
        "Keep notes.txt as it is",
    ]
    assert "changed since Invincat wrote it: kept unless you confirm it" in kept
    assert "Kept `notes.txt`" in kept
    assert (workspace / "notes.txt").read_text() == "my own edit\n"

    for answer in ("rewind", "overwrite"):
        await agent.client.answers.put(answer)
    await _said(agent, "/rewind 1 code")
    assert (workspace / "notes.txt").read_bytes() == ORIGINAL


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("/rewind sideways", "is not a turn and a scope"),
        ("/rewind 1 everything", "is not code, conversation or both"),
        ("/rewind 1 code now", "is not a turn and a scope"),
        ("/rewind 0", "choose a turn from 1 to 1"),
        ("/rewind 7 both", "choose a turn from 1 to 1"),
        ("/rewind 99999999999999999999", "is not a turn and a scope"),
        ("/rewind 1\x00", "is not a turn and a scope"),
    ],
)
async def test_bad_arguments_say_so_and_change_nothing(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path, command: str, says: str
) -> None:
    await _turn_that_writes(fake_openai, agent, workspace)
    asked = len(agent.client.permission_requests)
    answer = await _said(agent, command)
    assert says in answer and "Nothing was changed." in answer
    assert len(agent.client.permission_requests) == asked
    assert (workspace / "notes.txt").read_text() == "rewritten\n"


async def test_no_turns_yet_and_a_running_turn_are_refused(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    assert "no turns yet" in await _said(agent, "/rewind 1")

    fake_openai.add_steps([_write("new.txt", "x\n"), {"content": "ok"}])
    running = asyncio.ensure_future(_prompt(agent, "write new.txt"))
    await agent.client.wait_for(lambda: agent.client.permission_requests)
    with pytest.raises(RequestError) as refused:
        await _prompt(agent, "/rewind 1 code")
    assert "still working on the previous prompt" in str(refused.value)
    await agent.client.answers.put("reject_once")
    assert (await asyncio.wait_for(running, DEADLINE)).stop_reason == "end_turn"
    assert len(agent.client.permission_requests) == 1
    assert not (workspace / "new.txt").exists()


async def test_a_rewind_while_a_plan_waits_for_its_refinement_is_not_the_refinement(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    todos = [{"content": "Create hello.txt with a greeting"}]
    plan = [
        {"tool_calls": [{"name": "write_todos", "arguments": {"todos": todos}}]},
        {"tool_calls": [{"name": "approve_plan", "arguments": {"todos": todos}}]},
    ]
    fake_openai.add_steps(plan)
    await agent.client.answers.put("refine")
    assert (await _prompt(agent, "/plan add a greeting file")).stop_reason == "end_turn"
    model_calls = len(fake_openai.chat_requests())

    answer = await _said(agent, "/rewind 1 code")
    assert "A turn is still running in this session" in answer
    assert len(fake_openai.chat_requests()) == model_calls  # not sent as the plan's feedback
    assert len(agent.client.permission_requests) == 1
