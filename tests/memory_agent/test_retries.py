"""A run of the memory agent asks once more when nothing of the memory model's answer could
be stored (small models leave out a field, or write broken JSON: tests/memory_agent/
test_text_submit.py); a one-shot `invincat chat` has no next run to correct it in."""

from __future__ import annotations

import pytest

from invincat_server.runtime.events import MemoryChanged
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.memory_agent.test_extraction import (
    MEMORY_MODEL,
    ON,
    create,
    main,
    memory,
    memory_requests,
)
from tests.sessions import SessionFactory, run_turn


def unsectioned(content: str) -> dict[str, object]:
    """As Qwen2.5-Coder-1.5B proposed it (bench run 13): no `section`, so it is dropped."""
    operation = create(content)
    del operation["section"]
    return operation


async def test_a_proposal_dropped_whole_is_asked_again_and_the_second_is_stored(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps(
        [
            main("Noted."),
            memory(unsectioned("Makefiles are indented with tabs")),
            memory(create("Makefiles are indented with tabs", "Formatting")),
        ]
    )
    session = await make_session(**ON)
    _, events = await run_turn(session, "remember: Makefiles use tabs", follow=True)
    assert any(isinstance(e, MemoryChanged) for e in events)
    [entry] = session.memory.list()
    assert (entry.section, entry.content) == ("Formatting", "Makefiles are indented with tabs")
    first, second = memory_requests(fake_openai)
    assert "previous proposal was not applied" not in first["messages"][1]["content"]
    asked = second["messages"][1]["content"]
    assert "previous proposal was not applied" in asked and "requires 'section'" in asked
    # Asked again for JSON fitting the operations' schema (a local server decodes only
    # such text), with no tool offered: here the fake server answers with the tool anyway.
    assert "tools" in first and "response_format" not in first
    assert "tools" not in second
    schema = second["response_format"]["json_schema"]["schema"]
    [create_op] = [
        o
        for o in schema["properties"]["operations"]["items"]["anyOf"]
        if o["properties"]["op"] == {"const": "create"}
    ]
    assert "section" in create_op["required"]


async def test_dropped_twice_the_run_ends_as_before_and_the_next_run_starts_clean(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps(
        [main("Noted."), *[memory(unsectioned("Makefiles use tabs"))] * 2, main("Ok.")]
    )
    session = await make_session(**ON)
    thread, events = await run_turn(session, "remember: Makefiles use tabs", follow=True)
    assert session.memory.list() == [] and not any(isinstance(e, MemoryChanged) for e in events)
    assert len(memory_requests(fake_openai)) == 2  # asked once more, not in a loop
    # A drop is no failure: the cursor moved on, so the next run is not told about it.
    fake_openai.add_steps([memory({"op": "noop", "reason": "nothing new"})])
    await run_turn(session, "and we use tabs in Go too", thread, follow=True)
    assert (
        "previous proposal was not applied"
        not in (memory_requests(fake_openai)[-1]["messages"][1]["content"])
    )


async def test_a_partly_stored_proposal_is_not_asked_again(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps(
        [main("Noted."), memory(create("Lint with ruff", "Tooling"), unsectioned("Use tabs"))]
    )
    session = await make_session(**ON)
    await run_turn(session, "remember: we lint with ruff and use tabs", follow=True)
    assert [e.content for e in session.memory.list()] == ["Lint with ruff"]
    assert len(memory_requests(fake_openai)) == 1


async def test_a_noop_to_an_explicit_request_is_asked_again_and_the_second_is_stored(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    """Bench run 21: Qwen2.5-Coder-1.5B answered noop to "Remember this convention for this
    project: Makefiles are always indented with tabs"."""
    fake_openai.add_steps(
        [
            main("Noted."),
            memory({"op": "noop", "reason": "nothing durable"}),
            memory(create("Makefiles are indented with tabs", "Formatting")),
        ]
    )
    session = await make_session(**ON)
    _, events = await run_turn(session, "remember: Makefiles use tabs", follow=True)
    assert any(isinstance(e, MemoryChanged) for e in events)
    [entry] = session.memory.list()
    assert entry.content == "Makefiles are indented with tabs"
    _first, second = memory_requests(fake_openai)
    asked = second["messages"][1]["content"]
    assert "explicitly asked for something to be remembered" in asked
    # Decoded under a schema with no noop: told in words, the model answered noop again.
    listed = second["response_format"]["json_schema"]["schema"]["properties"]["operations"]
    ops = {choice["properties"]["op"]["const"] for choice in listed["items"]["anyOf"]}
    assert "noop" not in ops and "create" in ops and listed["minItems"] == 1


async def test_a_noop_without_an_explicit_request_is_not_asked_again(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps([main("It adds."), memory({"op": "noop", "reason": "nothing durable"})])
    session = await make_session(**ON)
    await run_turn(session, "what does add do?", follow=True)
    assert session.memory.list() == []
    assert len(memory_requests(fake_openai)) <= 1


@pytest.mark.parametrize(("prompt", "noop_offered"), [("remember: tabs", False), ("hi", True)])
async def test_after_an_unusable_answer_the_retry_offers_noop_unless_asked_to_remember(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, prompt: str, noop_offered: bool
) -> None:
    """Bench run 29: the memory model's first answer was broken JSON and its constrained
    retry answered noop to "Remember this convention …"."""
    fake_openai.add_steps(
        [
            main("Noted."),
            {"match": {"model": MEMORY_MODEL}, "content": "Not JSON at all"},
            memory(create("Makefiles are indented with tabs", "Formatting")),
        ]
    )
    session = await make_session(**ON)
    await run_turn(session, prompt, follow=True)
    _first, second = memory_requests(fake_openai)
    listed = second["response_format"]["json_schema"]["schema"]["properties"]["operations"]
    ops = {choice["properties"]["op"]["const"] for choice in listed["items"]["anyOf"]}
    assert ("noop" in ops) is noop_offered
