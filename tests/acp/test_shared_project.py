"""ACP sessions in one project root share ONE core Project (runtime/project/): one memory
service, one set of MCP servers, one agent stack; each session's turns still read and
write through that session's client; closing one leaves the others working."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

from acp import PROTOCOL_VERSION, text_block
from acp.schema import McpServerStdio

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import ScriptedClient, acp_agent, capabilities
from tests.extensions.conftest import MCP_SERVER


def _create(content: str) -> dict:
    return {
        "op": "create",
        "scope": "project",
        "section": "Testing",
        "content": content,
        "confidence": "high",
        "score": 85,
        "score_reason": "the user asked to remember it",
    }


def _server(marker: Path) -> McpServerStdio:
    command = [str(MCP_SERVER), "--name", "demo", "--marker", str(marker)]
    return McpServerStdio(name="demo", command=sys.executable, args=command, env=[])


async def test_two_sessions_in_one_folder_share_one_project(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    marker = workspace.parent / "mcp-starts.txt"
    (workspace / "sub").mkdir()
    (workspace / "notes.txt").write_text("disk text\n")
    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        opened = await conn.new_session(cwd=str(workspace), mcp_servers=[_server(marker)])
        first = opened.session_id
        # Another folder of the same project root (its .git is above it).
        second = (
            await conn.new_session(cwd=str(workspace / "sub"), mcp_servers=[_server(marker)])
        ).session_id

        # A memory created in one session is listed in the other at once: one service.
        created = await conn.ext_method(
            "invincat/memory/apply",
            {"sessionId": first, "scope": "project", "operations": [_create("Run pytest -q")]},
        )
        assert not created["rejected"]
        listed = await conn.ext_method("invincat/memory/list", {"sessionId": second})
        assert [i["content"] for i in listed["items"]] == ["Run pytest -q"]

        # Closing the first session leaves the second working, through its own client.
        await conn.close_session(session_id=first)
        client.buffers[str(workspace.resolve() / "notes.txt")] = "the second's unsaved text\n"
        fake_openai.add_steps(
            [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
                {"match": {"has_tool_result": True}, "content": "Read it."},
            ]
        )
        answer = await conn.prompt(session_id=second, prompt=[text_block("read notes.txt")])
        assert answer.stop_reason == "end_turn"
        tool_message = next(
            m for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"
        )
        assert "the second's unsaved text" in tool_message["content"]
        # Both sessions' MCP servers were one start: one set for the project.
        assert len(marker.read_text().split()) == 1
        offered = {t["function"]["name"] for t in fake_openai.chat_requests()[0]["tools"]}
        assert "demo__echo" in offered


async def test_a_session_on_the_home_directory_is_warned_once(
    invincat_env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "someone"
    home.mkdir()
    env = {**invincat_env, "HOME": str(home), "INVINCAT_HOME": str(home / ".invincat")}
    client = ScriptedClient()
    async with acp_agent(env, home, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        await conn.new_session(cwd=str(home), mcp_servers=[])
        await client.wait_for(lambda: "project root is your home directory" in client.text())
        assert f"your home directory ({home.resolve()})" in client.text()


async def test_a_write_resumed_after_a_restart_goes_through_the_loading_client(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """The shared Session has no client of its own: the approval a dead process left
    pending resumes its turn with the document source of the session that loaded it."""
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "n.txt", "content": "hi\n"}}
                ]
            },
            {"content": "Wrote n.txt after the restart."},
        ]
    )
    first = ScriptedClient()
    async with acp_agent(invincat_env, workspace, first) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=session_id, prompt=[text_block("write n.txt")])
        )
        await first.wait_for(lambda: first.permission_requests)
        process.kill()
        await process.wait()
        with contextlib.suppress(Exception):
            await prompt

    second = ScriptedClient()
    async with acp_agent(invincat_env, workspace, second) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        await second.wait_for(lambda: second.permission_requests)
        await second.answers.put("allow_once")
        await second.wait_for(lambda: "after the restart" in second.text())
    assert second.writes == [(str(workspace.resolve() / "n.txt"), "hi\n")]
    assert not (workspace / "n.txt").exists()  # the editor saves, not us
