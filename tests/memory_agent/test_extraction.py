"""The memory agent after each turn, with the fake server playing both models."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.events import MemoryChanged, MemoryUpdating, TurnEnd
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

MEMORY_MODEL = "memory-model"
ON = {"INVINCAT_MEMORY_EXTRACTION": "on", "INVINCAT_MEMORY_MODEL": MEMORY_MODEL}


def main(content: str) -> dict[str, Any]:
    return {"match": {"model": "fake-model"}, "content": content}


def memory(*operations: dict[str, Any], **extra: Any) -> dict[str, Any]:
    call = {"name": "submit_memory_operations", "arguments": {"operations": list(operations)}}
    return {"match": {"model": MEMORY_MODEL}, "tool_calls": [call], **extra}


def create(content: str, section: str = "Testing", score: int = 85) -> dict[str, Any]:
    return {
        "op": "create",
        "scope": "project",
        "section": section,
        "content": content,
        "confidence": "high",
        "score": score,
        "score_reason": "the user asked to remember it",
    }


def memory_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r for r in server.chat_requests() if r.get("model") == MEMORY_MODEL]


def main_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r for r in server.chat_requests() if r.get("model") == "fake-model"]


async def test_explicit_request_creates_a_hot_entry_the_next_turn_sees(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps(
        [main("Noted."), memory(create("Run the tests with pytest -q")), main("Sure.")]
    )
    session = await make_session(**ON)
    thread, events = await run_turn(session, "remember we use pytest with -q", follow=True)
    kinds = [e.type for e in events]
    assert kinds.index("turn_end") < kinds.index("memory_updating") < kinds.index("memory_changed")
    assert kinds[-1] == "memory_idle" and events[-1].changed
    [entry] = session.memory.list()
    assert (entry.scope, entry.confidence, entry.tier) == ("project", "high", "hot")
    [request] = memory_requests(fake_openai)
    assert "explicitly asked" in request["messages"][1]["content"]
    assert "remember we use pytest with -q" in request["messages"][1]["content"]

    await run_turn(session, "how do I run the tests?", thread)
    system = main_requests(fake_openai)[-1]["messages"][0]["content"]
    assert "Run the tests with pytest -q" in system


async def test_a_contradiction_is_applied_as_delete_plus_create(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps([main("Noted."), memory(create("Run the tests with pytest -q"))])
    session = await make_session(**ON)
    thread, _ = await run_turn(session, "remember we use pytest with -q", follow=True)
    [old] = session.memory.list()
    fake_openai.add_steps(
        [
            main("Understood, nox from now on."),
            memory(
                {"op": "delete", "scope": "project", "id": old.id, "reason": "replaced by nox"},
                create("Run the tests with nox -s tests"),
            ),
        ]
    )
    await run_turn(
        session, "actually, from now on we run tests with nox -s tests", thread, follow=True
    )
    [new] = session.memory.list()
    assert new.content == "Run the tests with nox -s tests" and new.id != old.id
    batches = [r for r in session.memory.log("project") if r.actor == "memory_agent"]
    ops_per_batch = [sorted(a.op for a in r.applied) for r in batches]
    assert ["create", "delete"] in ops_per_batch, ops_per_batch


@pytest.mark.parametrize("ack", ["ok", "thanks!", "继续", "Thank you."])
async def test_bare_acknowledgements_never_call_the_memory_model(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, ack: str
) -> None:
    fake_openai.add_steps([main("Here you go.")])
    session = await make_session(**ON)
    await run_turn(session, ack, follow=True)
    assert memory_requests(fake_openai) == []


async def test_turn_end_arrives_while_the_memory_model_is_still_answering(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps(
        [main("Noted."), memory(create("Use ruff for linting", "Tooling"), delay=2.0)]
    )
    session = await make_session(**ON)
    started = time.monotonic()
    turn = await session.start_turn("remember: we lint with ruff")
    stamps: dict[str, float] = {}
    async for event in turn.events(follow=True):
        stamps.setdefault(event.type, time.monotonic() - started)
    assert stamps["turn_end"] < 1.5, stamps
    assert stamps["memory_changed"] - stamps["turn_end"] >= 1.5, stamps
    assert stamps["message_delta"] < stamps["turn_end"] < stamps["memory_updating"]


async def test_after_a_restart_only_new_messages_are_sent(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps([main("Noted."), memory({"op": "noop", "reason": "nothing durable"})])
    first = await make_session(**ON)
    thread, _ = await run_turn(first, "we deploy with fly.io", follow=True)
    await first.close()
    fake_openai.add_steps([main("Noted too."), memory({"op": "noop", "reason": "nothing"})])
    second = await make_session(**ON)
    await run_turn(second, "and our CI is GitHub Actions", thread, follow=True)
    requests = memory_requests(fake_openai)
    assert len(requests) == 2
    latest = requests[1]["messages"][1]["content"]
    assert "GitHub Actions" in latest and "fly.io" not in latest


async def test_secrets_and_home_paths_never_reach_the_memory_model_or_the_store(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, invincat_home: Path
) -> None:
    secrets = [
        "sk-proj-Abcdefghijklmnopqrstuvwx1234567890",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "/home/alice/projects/secret-plans",
    ]
    fake_openai.add_steps(
        [
            main("I will keep that in mind."),
            memory(create(f"Deploy key is {secrets[0]} stored in {secrets[3]}", "Deploy")),
        ]
    )
    session = await make_session(**ON)
    prompt = "remember: keys " + " and ".join(secrets)
    await run_turn(session, prompt, follow=True)
    sent = json.dumps(memory_requests(fake_openai))
    stored = "".join(p.read_text() for p in invincat_home.parent.rglob("memory_*") if p.is_file())
    for secret in secrets:
        assert secret not in sent
        assert secret not in stored


@pytest.mark.parametrize("failure", ["garbage", "conflict", "http_500"])
async def test_a_bad_memory_answer_changes_nothing_and_is_retried_next_turn(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, failure: str
) -> None:
    fake_openai.add_steps([main("Noted."), memory(create("Build with make"))])
    session = await make_session(**ON)
    thread, _ = await run_turn(session, "remember we build with make", follow=True)
    [entry] = session.memory.list()
    before = {p: p.read_bytes() for p in session.memory.store_paths().values() if p.exists()}

    bad = {
        "garbage": {
            "match": {"model": MEMORY_MODEL},
            "tool_calls": [{"name": "submit_memory_operations", "arguments_raw": "{not json"}],
        },
        "conflict": memory(
            {"op": "update", "scope": "project", "id": entry.id, "content": "Build with cmake"},
            {"op": "archive", "scope": "project", "id": entry.id, "reason": "old"},
        ),
        "http_500": {"match": {"model": MEMORY_MODEL}, "fault": "http_500", "times": 3},
    }[failure]
    fake_openai.add_steps([main("Right."), bad])
    _, events = await run_turn(
        session, "remember that releases are tagged vX.Y.Z", thread, follow=True
    )
    assert [e.status for e in events if isinstance(e, TurnEnd)] == ["completed"]
    assert not [e for e in events if isinstance(e, MemoryChanged)]
    assert events[-1].type == "memory_idle" and not events[-1].changed
    after = {p: p.read_bytes() for p in session.memory.store_paths().values() if p.exists()}
    assert after == before

    # The cursor did not move: the next run sees the failed slice again, and why it failed.
    fake_openai.add_steps([main("Ok."), memory({"op": "noop", "reason": "nothing new"})])
    await run_turn(session, "what else should I know?", thread, follow=True)
    retry = memory_requests(fake_openai)[-1]["messages"][1]["content"]
    assert "releases are tagged vX.Y.Z" in retry
    assert "previous proposal was not applied" in retry
    assert any(isinstance(e, MemoryUpdating) for e in events)


async def test_extraction_keeps_working_across_offload_and_a_rewritten_history(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps([main("One."), memory({"op": "noop", "reason": "nothing"})])
    session = await make_session(**ON)
    thread, _ = await run_turn(session, "we ship on Fridays", follow=True)
    fake_openai.add_steps([main("Two."), memory({"op": "noop", "reason": "nothing"})])
    await run_turn(session, "our staging host is called blue", thread, follow=True)

    # Offload cuts the model's context but not the checkpoint: the anchor still matches,
    # so the next extraction sends only the new turn.
    report = await session.offload(thread)
    assert report["offloadedMessages"] > 0
    fake_openai.add_steps([main("Three."), memory({"op": "noop", "reason": "nothing"})])
    await run_turn(session, "releases need two approvals", thread, follow=True)
    latest = memory_requests(fake_openai)[-1]["messages"][1]["content"]
    assert "two approvals" in latest and "staging host" not in latest

    # A history that no longer matches the anchor falls back to a bounded full extraction.
    cursors = session.stack.memory_agent.cursors
    cursor = await cursors.get(thread)
    assert cursor is not None
    await cursors.advance(thread, cursor.position, "not-the-real-anchor")
    fake_openai.add_steps([main("Four."), memory({"op": "noop", "reason": "nothing"})])
    await run_turn(session, "the changelog lives in CHANGES.md", thread, follow=True)
    fallback = memory_requests(fake_openai)[-1]["messages"][1]["content"]
    assert "ship on Fridays" in fallback and "CHANGES.md" in fallback
    assert len(fallback) < 16_000
