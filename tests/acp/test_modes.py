"""Session modes agent/plan, plan updates from write_todos, plan approval as a permission."""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.conftest import Agent

PLAN = [{"content": "Create hello.txt with a greeting"}, {"content": "Report back"}]


def _call(name: str, **args: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _todos(*statuses: str) -> dict:
    return _call(
        "write_todos", todos=[{**t, "status": s} for t, s in zip(PLAN, statuses, strict=True)]
    )


async def test_plan_mode_asks_for_the_plan_then_executes_it(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            _call("write_todos", todos=PLAN),
            _call("approve_plan", todos=PLAN),
            _todos("in_progress", "pending"),
            _call("write_file", path="hello.txt", content="hello\n"),
            _todos("completed", "completed"),
            {"content": "Created hello.txt."},
        ]
    )
    await agent.conn.set_session_mode(session_id=agent.session_id, mode_id="plan")
    await agent.client.wait_for(lambda: agent.client.of_kind("current_mode_update"))
    raw = next(
        m["params"]["update"]
        for m in agent.client.incoming
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "current_mode_update"
    )
    assert raw == {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}

    await agent.client.answers.put("allow_once")  # the plan
    await agent.client.answers.put("allow_once")  # the write it leads to
    answer = await agent.conn.prompt(
        session_id=agent.session_id, prompt=[text_block("add a greeting file")]
    )
    assert answer.stop_reason == "end_turn"
    assert (workspace / "hello.txt").read_text() == "hello\n"

    plan_request, write_request = agent.client.permission_requests
    options = plan_request["options"]
    assert [o.option_id for o in options] == ["allow_once", "refine", "reject_always"]
    # A client that labels options by kind alone still shows three different choices.
    assert [o.kind for o in options] == ["allow_once", "reject_once", "reject_always"]
    assert "Create hello.txt" in plan_request["tool_call"].content[0].content.text
    assert write_request["tool_call"].title == "Write hello.txt"

    plans = agent.client.of_kind("plan")
    assert [e.content for e in plans[0].entries] == [t["content"] for t in PLAN]
    assert [e.status for e in plans[-1].entries] == ["completed", "completed"]
    assert agent.client.text().endswith("Created hello.txt.")


async def test_refine_the_plan_with_the_next_prompt_then_approve(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    plan_b = [{"content": "Create greeting.md instead"}]
    fake_openai.add_steps(
        [
            _call("write_todos", todos=PLAN),
            _call("approve_plan", todos=PLAN),
            {
                "match": {"any_message_contains": "markdown please"},
                "tool_calls": [{"name": "write_todos", "arguments": {"todos": plan_b}}],
            },
            _call("approve_plan", todos=plan_b),
            _call("write_file", path="greeting.md", content="# hello\n"),
            {"content": "Created greeting.md."},
        ]
    )
    await agent.client.answers.put("refine")
    first = await agent.conn.prompt(
        session_id=agent.session_id, prompt=[text_block("/plan add a greeting file")]
    )
    assert first.stop_reason == "end_turn"  # answered; the plan waits for the feedback
    assert "What should change" in agent.client.text()
    assert not (workspace / "hello.txt").exists()

    await agent.client.answers.put("allow_once")  # the refined plan
    await agent.client.answers.put("allow_once")  # the write
    second = await agent.conn.prompt(
        session_id=agent.session_id, prompt=[text_block("markdown please")]
    )
    assert second.stop_reason == "end_turn"
    assert (workspace / "greeting.md").read_text() == "# hello\n"
    assert not (workspace / "hello.txt").exists()
    refined = agent.client.permission_requests[1]["tool_call"].content[0].content.text
    assert "greeting.md" in refined
    assert agent.client.text().endswith("Created greeting.md.")


async def test_rejecting_the_plan_changes_nothing(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps([_call("write_todos", todos=PLAN), _call("approve_plan", todos=PLAN)])
    await agent.client.answers.put("reject_always")
    answer = await agent.conn.prompt(
        session_id=agent.session_id, prompt=[text_block("/plan add a greeting file")]
    )
    assert answer.stop_reason == "end_turn"
    assert not (workspace / "hello.txt").exists()
    assert len(agent.client.permission_requests) == 1
    assert "What should change" not in agent.client.text()  # rejected, not refining
    # Rejecting a plan remembers no rule for the session.
    await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block("/rules")])
    assert "deny" not in agent.client.text()


async def test_unknown_mode_is_refused(agent: Agent) -> None:
    from acp import RequestError

    try:
        await agent.conn.set_session_mode(session_id=agent.session_id, mode_id="yolo")
    except RequestError as exc:
        assert "agent, plan" in str(exc)
    else:
        raise AssertionError("an unknown mode was accepted")


async def test_ask_user_choices_and_a_free_text_answer(
    fake_openai: FakeOpenAIServer, agent: Agent
) -> None:
    fake_openai.add_steps(
        [
            _call("ask_user", questions=[{"question": "Which color?", "options": ["red", "blue"]}]),
            _call("ask_user", questions=[{"question": "What name?"}]),
            {"content": "Thanks."},
        ]
    )
    await agent.client.answers.put("answer:1")  # blue
    await agent.client.answers.put("reply")  # type it
    first = await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block("ask me")])
    assert first.stop_reason == "end_turn"
    choice, free = agent.client.permission_requests
    assert [o.name for o in choice["options"]][:2] == ["red", "blue"]
    assert choice["tool_call"].title == "Which color?"
    assert "reply" in [o.option_id for o in free["options"]]

    second = await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block("Ada")])
    assert second.stop_reason == "end_turn"
    tool_messages = [
        m["content"] for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"
    ]
    assert "blue" in tool_messages[0] and "Ada" in tool_messages[1]
    assert agent.client.text().endswith("Thanks.")


async def test_switching_back_to_agent_mode_ends_a_plan_waiting_for_refine_feedback(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            _call("write_todos", todos=PLAN),
            _call("approve_plan", todos=PLAN),
            {"match": {"any_message_contains": "switched back to agent mode"}, "content": "OK."},
            {"match": {"last_user_contains": "what time is it"}, "content": "Noon."},
        ]
    )
    await agent.conn.set_session_mode(session_id=agent.session_id, mode_id="plan")
    await agent.client.answers.put("refine")
    first = await agent.conn.prompt(
        session_id=agent.session_id, prompt=[text_block("add a greeting file")]
    )
    assert first.stop_reason == "end_turn"  # the plan waits for the feedback
    await agent.conn.set_session_mode(session_id=agent.session_id, mode_id="agent")
    assert "The plan is dropped" in agent.client.text()

    second = await agent.conn.prompt(
        session_id=agent.session_id, prompt=[text_block("what time is it?")]
    )
    assert second.stop_reason == "end_turn"
    assert agent.client.text().endswith("Noon.")  # an ordinary prompt, not plan feedback
    last = fake_openai.chat_requests()[-1]["messages"]
    assert last[-1] == {"role": "user", "content": "what time is it?"}
    assert len(agent.client.permission_requests) == 1  # no revised plan asked
    assert not (workspace / "hello.txt").exists()
