"""The memory model's `submit_memory_operations` written as text (small open models)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from invincat_server.runtime.events import MemoryChanged
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.memory_agent.test_extraction import MEMORY_MODEL, ON, create, main, memory_requests
from tests.sessions import SessionFactory, run_turn


def written(operations: Any, form: str = "fenced") -> dict[str, Any]:
    call = json.dumps({"name": "submit_memory_operations", "arguments": {"operations": operations}})
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
    fake_openai.add_steps([main("Noted."), written("not a list")])
    session = await make_session(**ON)
    thread, _ = await run_turn(session, "remember: we lint with ruff", follow=True)
    assert session.memory.list() == []
    fake_openai.add_steps([main("Ok."), written([{"op": "noop", "reason": "nothing new"}])])
    await run_turn(session, "and what else?", thread, follow=True)
    retry = memory_requests(fake_openai)[-1]["messages"][1]["content"]
    assert "previous proposal was not applied" in retry and "as text" in retry


async def test_off_refuses_a_text_submit(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps([main("Noted."), written([create("Lint with ruff", "Tooling")])])
    session = await make_session(**ON, INVINCAT_TEXT_TOOL_CALLS="off")
    await run_turn(session, "remember: we lint with ruff", follow=True)
    assert session.memory.list() == []
