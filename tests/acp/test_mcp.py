"""MCP servers the client passes in session/new run next to Invincat's own, and ask first."""

from __future__ import annotations

import sys
from pathlib import Path

from acp import PROTOCOL_VERSION, text_block
from acp.schema import EnvVariable, McpServerStdio

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import ScriptedClient, acp_agent, capabilities
from tests.extensions.conftest import MCP_SERVER


def _server(name: str, *extra: str) -> McpServerStdio:
    return McpServerStdio(
        name=name,
        command=sys.executable,
        args=[str(MCP_SERVER), "--name", name, *extra],
        env=[EnvVariable(name="DEMO", value="1")],
    )


async def test_client_mcp_servers_are_started_asked_for_and_never_expanded(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "demo__echo", "arguments": {"text": "hi", "times": 2}}]},
            {"content": "Echoed."},
        ]
    )
    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        # A value naming one of this process's variables must not be filled in from it
        # (the environment holds the model API key).
        leak = _server("leak", "--marker", "${OPENAI_API_KEY}")
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[_server("demo"), leak])
        await client.answers.put("allow_once")
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("echo")])
        assert answer.stop_reason == "end_turn"

    [asked] = client.permission_requests
    # An MCP tool in the phrase book's generic words: its name and first text argument.
    assert asked["tool_call"].title == "demo__echo hi" and asked["tool_call"].kind == "other"
    tool_message = next(
        m for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"
    )
    assert tool_message["content"] == "hi hi"
    offered = {t["function"]["name"] for t in fake_openai.chat_requests()[0]["tools"]}
    assert "demo__echo" in offered and "leak__echo" not in offered
    assert "OPENAI_API_KEY is not set" in client.text()
    assert not (workspace / "test-key").exists()  # the marker path, had it been expanded
