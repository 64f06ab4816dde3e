"""The shell sandbox over ACP: a client is told once when the sandbox is configured but
bwrap is missing, every command then asks with no "allow always", and a call that asks to
leave the sandbox says so in its permission request's title."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.conftest import Agent


@pytest.fixture
def invincat_env(invincat_env: dict[str, str]) -> dict[str, str]:
    # Neither bwrap nor the Landlock fallback: nothing confines commands.
    return {**invincat_env, "INVINCAT_BWRAP": "/nonexistent/bwrap", "INVINCAT_LANDLOCK": "off"}


def _run(command: str, **extra: object) -> dict:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command, **extra}}]}


def _text(agent: Agent) -> str:
    chunks = agent.client.of_kind("agent_message_chunk")
    return "".join(getattr(c.content, "text", "") for c in chunks)


async def test_without_bwrap_the_client_is_told_and_every_command_asks(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            _run("touch a.txt"),
            _run("touch b.txt", unsandboxed=True, reason="testing"),
            {"content": "done"},
        ]
    )
    await agent.client.answers.put("allow_once")
    await agent.client.answers.put("reject_once")
    answer = await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block("go")])
    assert answer.stop_reason == "end_turn"
    assert "configured but unavailable" in _text(agent), _text(agent)
    first, second = agent.client.permission_requests
    assert [o.kind for o in first["options"]] == ["allow_once", "reject_once", "reject_always"]
    shown = " ".join(getattr(c.content, "text", "") for c in first["tool_call"].content or [])
    assert "WITHOUT a sandbox (bwrap not found; Landlock turned off" in shown, shown
    assert second["tool_call"].title == "Run WITHOUT the sandbox: `touch b.txt`"
    assert (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
