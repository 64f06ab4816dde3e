"""The memory model's `submit_memory_operations` written as text (small open models)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from invincat_server.runtime.events import MemoryChanged
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.memory_agent.test_extraction import MEMORY_MODEL, ON, create, main, memory_requests
from tests.sessions import SessionFactory, run_turn


def written(
    operations: Any, form: str = "fenced", name: str = "submit_memory_operations"
) -> dict[str, Any]:
    call = json.dumps({"name": name, "arguments": {"operations": operations}})
    content = f"```json\n{call}\n```" if form == "fenced" else f"<tool_call>{call}</tool_call>"
    return {"match": {"model": MEMORY_MODEL}, "content": content}


@pytest.mark.parametrize("form", ["fenced", "hermes"])
async def test_a_text_submit_is_governed_and_stored(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, form: str
) -> None:
    fake_openai.add_steps([main("Noted."), written([create("Lint with ruff", "Tooling")], form)])
    session = await make_session(**ON)
    _, events = await run_turn(session, "remember: we lint with ruff", follow=True)
    assert any(isinstance(e, MemoryChanged) for e in events)
    [entry] = session.memory.list()
    assert entry.content == "Lint with ruff"
    [record] = [r for r in session.memory.log("project") if r.actor == "memory_agent"]
    assert [a.op for a in record.applied] == ["create"]


async def test_a_text_submit_with_bad_arguments_stores_nothing_and_says_why(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps([main("Noted."), written("not a list"), written("still not a list")])
    session = await make_session(**ON)
    thread, _ = await run_turn(session, "remember: we lint with ruff", follow=True)
    assert session.memory.list() == []
    # Asked once more in the same run, quoting why; then the reason waits for the next run.
    again = memory_requests(fake_openai)[-1]["messages"][1]["content"]
    assert "previous proposal was not applied" in again and "as text" in again
    fake_openai.add_steps([main("Ok."), written([{"op": "noop", "reason": "nothing new"}])])
    await run_turn(session, "and what else?", thread, follow=True)
    # The next run's first request (its noop to the pending "remember:" is asked again).
    retry = memory_requests(fake_openai)[2]["messages"][1]["content"]
    assert "previous proposal was not applied" in retry and "as text" in retry


async def test_an_unusable_answer_is_asked_again_once_and_the_second_is_stored(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    """Qwen2.5-Coder-1.5B wrote its submit as invalid JSON in 1 of 6 answers; a one-shot
    `invincat chat` has no next run to correct it in."""
    broken = {
        "match": {"model": MEMORY_MODEL},
        "content": '```json\n{"name": "submit_memory_operations", "arguments": '
        '{"operations": [{"op": "create" "scope"}]}}\n```',
    }
    fake_openai.add_steps([main("Noted."), broken, written([create("Lint with ruff", "Tooling")])])
    session = await make_session(**ON)
    _, events = await run_turn(session, "remember: we lint with ruff", follow=True)
    assert any(isinstance(e, MemoryChanged) for e in events)
    [entry] = session.memory.list()
    assert entry.content == "Lint with ruff"
    first, second = memory_requests(fake_openai)
    assert "previous proposal was not applied" not in first["messages"][1]["content"]
    assert "not valid JSON" in second["messages"][1]["content"]


async def test_off_refuses_a_text_submit(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps([main("Noted."), written([create("Lint with ruff", "Tooling")])])
    session = await make_session(**ON, INVINCAT_TEXT_TOOL_CALLS="off")
    await run_turn(session, "remember: we lint with ruff", follow=True)
    assert session.memory.list() == []


@pytest.mark.parametrize("form", ["fenced", "hermes"])
async def test_a_misnamed_submit_is_still_the_one_tool_and_governed(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, form: str
) -> None:
    """The memory model is offered one tool: a small model that calls it `write_memory`
    (seen with Qwen2.5-Coder-1.5B) meant that one; its operations are governed as ever."""
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"
    operations = [create("Lint with ruff", "Tooling"), create(f"key {secret}", "Tooling")]
    fake_openai.add_steps([main("Noted."), written(operations, form, name="write_memory")])
    session = await make_session(**ON)
    await run_turn(session, "remember: we lint with ruff", follow=True)
    stored = [e.content for e in session.memory.list()]
    assert "Lint with ruff" in stored and not any(secret in c for c in stored), stored


async def test_a_misnamed_submit_without_operations_stores_nothing(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps([main("Noted."), written("not a list", name="write_memory")])
    session = await make_session(**ON)
    await run_turn(session, "remember: we lint with ruff", follow=True)
    assert session.memory.list() == []


async def test_a_submit_whose_arguments_are_the_operations_list_is_understood(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    """`"arguments": [ops]` without the `operations` key (Qwen2.5-Coder-1.5B, bench run 6)."""
    call = json.dumps(
        {"name": "submit_memory_operations", "arguments": [create("Lint with ruff", "Tooling")]}
    )
    step = {"match": {"model": MEMORY_MODEL}, "content": f"```json\n{call}\n```"}
    fake_openai.add_steps([main("Noted."), step])
    session = await make_session(**ON)
    await run_turn(session, "remember: we lint with ruff", follow=True)
    assert [e.content for e in session.memory.list()] == ["Lint with ruff"]


async def test_a_submit_whose_arguments_are_one_operation_is_understood(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    """`"arguments": {"op": "create", …}`: one operation for the list (bench run 8)."""
    call = json.dumps(
        {"name": "submit_memory_operations", "arguments": create("Lint with ruff", "Tooling")}
    )
    step = {"match": {"model": MEMORY_MODEL}, "content": f"<tool_call>{call}</tool_call>"}
    fake_openai.add_steps([main("Noted."), step])
    session = await make_session(**ON)
    await run_turn(session, "remember: we lint with ruff", follow=True)
    assert [e.content for e in session.memory.list()] == ["Lint with ruff"]
