"""`search_memory` in a real session: the main model (fake server) calls it and sees
entries the injection caps left out, archived ones included, redacted."""

from __future__ import annotations

import json
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

from .test_extraction import main_requests


def fact(content: str, score: int = 90) -> dict[str, Any]:
    return {
        "op": "create",
        "scope": "project",
        "section": "Notes",
        "content": content,
        "score": score,
    }


def search_step(query: str) -> dict[str, Any]:
    call = {"name": "search_memory", "arguments": {"query": query}}
    return {"match": {"model": "fake-model"}, "tool_calls": [call]}


def tool_results(fake_openai: FakeOpenAIServer) -> list[str]:
    messages = main_requests(fake_openai)[-1]["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


async def test_search_finds_what_the_caps_and_archiving_leave_out(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    session = await make_session()
    fillers = [fact(f"hot filler {n} about unrelated topic number {n}") for n in range(12)]
    session.memory.apply("project", fillers)
    ids = session.memory.apply(
        "project",
        [
            fact("Release notes go to docs/CHANGES.md, newest first", score=75),
            fact("Old: release notes lived in the wiki", score=80),
            fact("Release notes wrongly said to go to README", score=80),
        ],
    ).created_ids()
    session.memory.archive(ids[1], "moved to the repo")
    session.memory.archive(ids[2], "wrong", invalid="wrong")
    assert "docs/CHANGES.md" not in session.memory.render_injection()  # beyond the caps

    fake_openai.add_steps([search_step("where do release notes go"), {"content": "Found it."}])
    await run_turn(session, "where do release notes go?")
    [result] = tool_results(fake_openai)
    lines = result.splitlines()
    assert lines[0].startswith(f"{ids[0]} [project/Notes] (hot 75)")
    assert any(line.startswith(f"{ids[1]} [project/Notes] (archived)") for line in lines)
    assert ids[2] not in result  # invalid entries are never recalled


async def test_search_results_are_redacted_even_after_a_hand_edit(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    session = await make_session()
    session.memory.apply("project", [fact("Staging token is PLACEHOLDER for the deploy")])
    store = session.memory.store_paths()["project"]
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    store.write_text(store.read_text().replace("PLACEHOLDER", secret))

    fake_openai.add_steps([search_step("staging token deploy"), {"content": "ok"}])
    await run_turn(session, "what is the staging token?")
    [result] = tool_results(fake_openai)
    assert "Staging token is" in result and secret not in result
    assert "[REDACTED" in result
    # Nor through the system prompt's memory block (injection redacts too).
    assert json.dumps(main_requests(fake_openai)).count(secret) == 0
