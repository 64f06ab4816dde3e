"""Slash commands start any text block of a prompt, not only the joined text: clients such
as codecompanion put their own text (a buffer's name, context) in a block before the one
the user typed."""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.conftest import Agent

PLAN = [{"content": "Create hello.txt with a greeting"}]


def _call(name: str, **args: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


async def test_plan_in_a_later_text_block_plans_the_prompt(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps([_call("write_todos", todos=PLAN), _call("approve_plan", todos=PLAN)])
    await agent.client.answers.put("reject_once")
    answer = await agent.conn.prompt(
        session_id=agent.session_id,
        prompt=[text_block("Sent from buffer main.py"), text_block("/plan add a greeting file")],
    )
    assert answer.stop_reason == "end_turn"
    [request] = agent.client.permission_requests
    assert request["tool_call"].title == "Approve this plan?"  # the planner ran
    sent = fake_openai.chat_requests()[0]["messages"][-1]["content"]
    assert "add a greeting file" in sent and "Sent from buffer main.py" in sent
    assert "/plan" not in sent
    assert not (workspace / "hello.txt").exists()


async def test_memory_in_a_later_text_block_is_the_command_not_a_model_call(
    fake_openai: FakeOpenAIServer, agent: Agent
) -> None:
    answer = await agent.conn.prompt(
        session_id=agent.session_id,
        prompt=[text_block("#buffer notes"), text_block("  /memory")],
    )
    assert answer.stop_reason == "end_turn"
    assert "remembers nothing yet" in agent.client.text()
    assert fake_openai.chat_requests() == []


async def test_a_slash_word_that_is_no_command_is_ordinary_text(
    fake_openai: FakeOpenAIServer, agent: Agent
) -> None:
    fake_openai.add_steps([{"content": "ok"}])
    await agent.conn.prompt(
        session_id=agent.session_id,
        prompt=[text_block("look at"), text_block("/usr/lib is odd"), text_block("/planet")],
    )
    sent = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert sent == "look at\n\n/usr/lib is odd\n\n/planet"
