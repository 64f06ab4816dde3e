"""Memory that stays true, end to end: a real session, the fake server playing the main
model and the memory model, a real project file the memory cites."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from invincat_server.runtime.memory_agent.prompt import STALE_HEADING
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

from .test_extraction import ON, main, main_requests, memory, memory_requests

DEPLOY = "#!/bin/sh\nset -e\n./build.sh --release\nrsync -a dist/ prod:/srv/app\necho done\n"
FACT = "Deploy builds with --release, then rsyncs dist/ to prod"


def cited_create() -> dict[str, Any]:
    return {
        "op": "create",
        "scope": "project",
        "section": "Deploy",
        "content": FACT,
        "confidence": "high",
        "score": 85,
        "score_reason": "the deploy script says so",
        "citations": [{"path": "scripts/deploy.sh", "start_line": 3, "end_line": 4}],
    }


async def _remember_deploy(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> tuple[Any, str]:
    (workspace / "scripts").mkdir()
    (workspace / "scripts" / "deploy.sh").write_text(DEPLOY)
    read = {"name": "read_file", "arguments": {"path": "scripts/deploy.sh"}}
    fake_openai.add_steps(
        [
            {"match": {"model": "fake-model"}, "tool_calls": [read]},
            main("Noted."),
            memory(cited_create()),
        ]
    )
    session = await make_session(**ON)
    thread, _ = await run_turn(session, "remember how we deploy", follow=True)
    # The memory model saw the file it cites: path and numbered lines, as evidence.
    [request] = memory_requests(fake_openai)
    assert '"path": "scripts/deploy.sh"' in request["messages"][1]["content"]
    assert "3\\t./build.sh --release" in request["messages"][1]["content"]
    assert "citations" in request["messages"][0]["content"]
    [entry] = session.memory.list()
    assert entry.citations[0].path == "scripts/deploy.sh"
    assert entry.citations[0].anchor == "./build.sh --release"
    return session, thread


async def test_changed_evidence_is_injected_with_a_note_and_the_memory_agent_is_asked(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    session, thread = await _remember_deploy(fake_openai, make_session, workspace)
    [entry] = session.memory.list()
    (workspace / "scripts" / "deploy.sh").write_text(DEPLOY.replace("--release", "--debug"))

    fake_openai.add_steps([main("We deploy with the script."), memory({"op": "noop"})])
    await run_turn(session, "how do we deploy these days?", thread, follow=True)

    system = main_requests(fake_openai)[-1]["messages"][0]["content"]
    assert f"{FACT} (may be stale: scripts/deploy.sh lines 3-4 changed)" in system
    asked = memory_requests(fake_openai)[-1]["messages"][1]["content"]
    assert STALE_HEADING in asked and entry.id in asked
    assert "--debug" in asked  # the text as it is now, so the model can decide
    [still] = session.memory.list()
    assert still.status == "active"  # stale is never a silent deletion


async def test_moved_lines_are_re_anchored_after_the_turn(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    session, thread = await _remember_deploy(fake_openai, make_session, workspace)
    deploy = workspace / "scripts" / "deploy.sh"
    deploy.write_text("# Deploy to production.\n# Usage: deploy.sh\n" + DEPLOY)

    fake_openai.add_steps([main("Sure."), memory({"op": "noop"})])
    await run_turn(session, "what does the deploy script do first?", thread, follow=True)

    assert "may be stale" not in main_requests(fake_openai)[-1]["messages"][0]["content"]
    [entry] = session.memory.list()
    assert (entry.citations[0].start_line, entry.citations[0].end_line) == (5, 6)
    assert any(r.actor == "reanchor" for r in session.memory.log("project"))
    assert STALE_HEADING not in memory_requests(fake_openai)[-1]["messages"][1]["content"]


async def test_a_deleted_file_leads_to_an_archive_the_user_can_revert(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    session, thread = await _remember_deploy(fake_openai, make_session, workspace)
    [entry] = session.memory.list()
    (workspace / "scripts" / "deploy.sh").unlink()

    archive = {
        "op": "archive",
        "scope": "project",
        "id": entry.id,
        "reason": "scripts/deploy.sh was deleted; the deploy fact no longer holds",
    }
    fake_openai.add_steps([main("The script is gone."), memory(archive)])
    await run_turn(session, "we removed the deploy script, CI deploys now", thread, follow=True)

    system = main_requests(fake_openai)[-1]["messages"][0]["content"]
    assert "(may be stale: scripts/deploy.sh was deleted)" in system
    asked = memory_requests(fake_openai)[-1]["messages"][1]["content"]
    assert STALE_HEADING in asked and "scripts/deploy.sh was deleted" in asked
    assert session.memory.list() == []
    [archived] = session.memory.list(include_archived=True)
    assert archived.status == "archived"
    batch = next(r for r in session.memory.log("project") if r.actor == "memory_agent")
    assert [a.op for a in batch.applied] == ["archive"]

    session.memory.revert(batch.batch_id)
    [back] = session.memory.list()
    assert back.id == entry.id and back.status == "active"


async def test_a_pulled_store_citing_a_file_outside_the_project_never_reads_it(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    """The project store is shared through git: its citations are untrusted. One that
    points outside the project must not make the staleness check read that file and hand
    its text to the memory model (or the main model)."""
    session, thread = await _remember_deploy(fake_openai, make_session, workspace)
    outside = workspace.parent / "outside"
    outside.mkdir()
    marker = "PRIVATE-NOTES-7f3a9c"
    (outside / "notes.txt").write_text(f"line one\nline two\n{marker} alpha\n{marker} beta\n")
    store = session.memory.store_paths()["project"]
    store.write_text(store.read_text().replace("scripts/deploy.sh", "../outside/notes.txt"))

    fake_openai.add_steps([main("Deploys run from CI."), memory({"op": "noop"})])
    await run_turn(session, "how do we deploy these days?", thread, follow=True)

    sent = json.dumps(fake_openai.chat_requests())
    assert marker not in sent
    system = main_requests(fake_openai)[-1]["messages"][0]["content"]
    assert "'../outside/notes.txt' is outside the project" in system
    asked = memory_requests(fake_openai)[-1]["messages"][1]["content"]
    assert STALE_HEADING in asked and "outside the project" in asked


async def test_the_memory_agent_may_cite_only_files_its_run_was_shown(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    (workspace / "Makefile").write_text("test:\n\tpytest -q\n")
    unseen = cited_create() | {
        "content": "Tests run with pytest -q via make test",
        "citations": [{"path": "Makefile", "start_line": 1, "end_line": 2}],
    }
    fake_openai.add_steps([main("Noted."), memory(unseen)])
    session = await make_session(**ON)
    await run_turn(session, "remember: make test runs the tests", follow=True)
    assert session.memory.list() == []
    batch = next(r for r in session.memory.log("project") if r.actor == "memory_agent")
    [dropped] = batch.dropped
    assert "Makefile was not among the files this run saw" in dropped.reason
