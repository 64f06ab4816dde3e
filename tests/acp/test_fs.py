"""fs/read_text_file and fs/write_text_file: unsaved buffers are what the agent sees and
edits; a client that refuses a write gets nothing written to disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.conftest import Agent


@pytest.fixture
def fs_capable() -> bool:
    return True


def _call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def test_edits_go_through_the_client_and_keep_unsaved_text(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    path = workspace / "notes.txt"
    path.write_text("line one\n")
    agent.client.buffers[str(path)] = "line one\nunsaved line\n"
    fake_openai.add_steps(
        [
            _call("read_file", path="notes.txt"),
            _call("edit_file", path="notes.txt", old_string="unsaved", new_string="edited"),
            {"content": "Edited."},
        ]
    )
    await agent.client.answers.put("allow_once")
    answer = await agent.conn.prompt(
        session_id=agent.session_id, prompt=[text_block("edit the notes")]
    )
    assert answer.stop_reason == "end_turn"
    # The model read the unsaved buffer, not the disk.
    read_result = next(m for m in fake_openai.chat_requests()[1]["messages"] if m["role"] == "tool")
    assert "unsaved line" in read_result["content"]
    # The approval showed the diff against the buffer, and the write went to the client.
    [asked] = agent.client.permission_requests
    [diff] = [c for c in asked["tool_call"].content if c.type == "diff"]
    assert diff.old_text == "line one\nunsaved line\n"
    assert diff.new_text == "line one\nedited line\n"
    assert agent.client.writes == [(str(path), "line one\nedited line\n")]
    assert path.read_text() == "line one\n"  # the editor saves, not us


async def test_a_refused_write_writes_nothing_to_disk(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    path = workspace / "notes.txt"
    path.write_text("saved\n")
    agent.client.refuse_writes = True
    fake_openai.add_steps(
        [_call("write_file", path="notes.txt", content="overwritten\n"), {"content": "Hm."}]
    )
    await agent.client.answers.put("allow_once")
    answer = await agent.conn.prompt(
        session_id=agent.session_id, prompt=[text_block("overwrite the notes")]
    )
    assert answer.stop_reason == "end_turn"
    assert path.read_text() == "saved\n"
    assert agent.client.writes == []
    assert agent.client.of_kind("tool_call_update")[-1].status == "failed"
    [tool_message] = [m for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert "refused" in tool_message["content"] and "nothing was written" in tool_message["content"]
