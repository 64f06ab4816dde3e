"""The core Project: one per root in a process, one Session shared by its users, events
fanned out in one place, the prompt-length limit and the memory views' one error mapping
(runtime/project/)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from invincat_server.runtime.config import load_settings
from invincat_server.runtime.errors import SessionError
from invincat_server.runtime.project import (
    MAX_PROMPT_CHARS,
    MemoryViewError,
    Projects,
    TurnEvent,
)
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE


class Buffers:
    """An editor's unsaved buffers: what a turn must read instead of the disk."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self.writes: list[Path] = []

    def read_text(self, path: Path) -> str | None:
        return self.texts.get(path)

    async def write_text(self, path: Path, text: str) -> bool:
        self.writes.append(path)
        self.texts[path] = text
        return True


async def test_one_project_and_one_session_per_root(
    invincat_monkeyenv: dict[str, str], workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    projects = Projects(load_settings())
    first = projects.open(workspace)
    second = projects.open(workspace / "sub")  # a subfolder of the same project root
    assert first is second
    sessions = await asyncio.gather(first.session(), second.session())
    assert sessions[0] is sessions[1]
    assert first.data.memory() is sessions[0].memory  # one memory service for the root
    await projects.release(first)
    assert projects.get(first.root) is first  # one user is left: still open
    assert await first.session() is sessions[0]
    await projects.release(second)
    assert projects.get(first.root) is None and first.session_if_open is None
    with pytest.raises(SessionError, match="closed"):
        await first.session()
    assert projects.open(workspace) is not first  # a later open starts afresh
    await projects.close()


async def test_a_failing_listener_does_not_stop_the_others(
    invincat_monkeyenv: dict[str, str], workspace: Path, fake_openai: FakeOpenAIServer
) -> None:
    projects = Projects(load_settings())
    project = projects.open(workspace)
    heard: list[TurnEvent] = []

    def broken(item: TurnEvent) -> None:
        raise RuntimeError("a front end's bug")

    project.events.add(broken)
    project.events.add(heard.append)
    fake_openai.add_steps([{"content": "hello"}])
    session = await project.session()
    turn = await session.start_turn("hi")
    async with asyncio.timeout(DEADLINE):
        events = [e async for e in turn.events()]
    await projects.release(project)
    assert events[-1].type == "turn_end"
    assert [item.event.type for item in heard] == [e.type for e in events]


async def test_each_turn_reads_through_the_document_source_it_was_given(
    invincat_monkeyenv: dict[str, str], workspace: Path, fake_openai: FakeOpenAIServer
) -> None:
    """One Session, two clients (two ACP sessions): each turn's tools read that client's
    buffer of the same file, not the other's and not the disk."""
    (workspace / "a.txt").write_text("disk text\n")
    projects = Projects(load_settings())
    project = projects.open(workspace)
    session = await project.session()
    alice = Buffers({workspace / "a.txt": "alice's unsaved text\n"})
    bob = Buffers({workspace / "a.txt": "bob's unsaved text\n"})
    results = {}
    for name, source in (("alice", alice), ("bob", bob)):
        fake_openai.add_steps(
            [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                {"match": {"has_tool_result": True}, "content": "read it"},
            ]
        )
        turn = await session.start_turn(f"read a.txt for {name}", documents=source)
        async with asyncio.timeout(DEADLINE):
            events = [e async for e in turn.events()]
        results[name] = next(e.content for e in events if e.type == "tool_result")
    await projects.release(project)
    assert "alice's unsaved text" in results["alice"]
    assert "bob's unsaved text" in results["bob"]
    assert "disk text" not in results["alice"] + results["bob"]


async def test_an_over_long_prompt_is_refused_with_what_to_do(
    invincat_monkeyenv: dict[str, str], workspace: Path
) -> None:
    projects = Projects(load_settings())
    project = projects.open(workspace)
    session = await project.session()
    with pytest.raises(SessionError) as refused:
        await session.start_turn("x" * (MAX_PROMPT_CHARS + 1))
    await projects.release(project)
    assert f"the limit is {MAX_PROMPT_CHARS:,}" in str(refused.value)
    assert "Save the text to a file" in str(refused.value)


def _conflict(store: Path) -> None:
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text('<<<<<<< HEAD\n{"entries": []}\n=======\n{"entries": []}\n>>>>>>> b\n')


async def test_memory_views_map_refusals_to_one_error(
    invincat_monkeyenv: dict[str, str], workspace: Path
) -> None:
    projects = Projects(load_settings())
    project = projects.open(workspace)
    views = project.memory_views
    assert views.list_view(None)["items"] == []
    with pytest.raises(MemoryViewError) as unknown:
        views.show_view("mem_p_000042")
    assert unknown.value.kind == "unknown"
    with pytest.raises(MemoryViewError) as invalid:
        views.apply("project", [{"id": "mem_p_000001"}], actor="user")
    assert invalid.value.kind == "invalid" and "`op` string" in invalid.value.message
    _conflict(project.data.memory().files["project"].store)
    with pytest.raises(MemoryViewError) as conflicted:
        views.list_view("project")  # the quick reader cannot vouch: the service refuses
    assert conflicted.value.kind == "unavailable"
    assert "git merge conflict" in conflicted.value.message
    assert any("conflict" in notice.lower() for notice in project.notices())
    await projects.release(project)


def test_the_project_and_its_light_reads_import_no_langchain(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    code = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from invincat_server.runtime.config import load_settings\n"
        "from invincat_server.runtime.project import Projects\n"
        f"project = Projects(load_settings()).open(Path({str(workspace)!r}))\n"
        "project.memory_views.list_view(None)\n"
        "asyncio.run(project.data.threads())\n"
        "asyncio.run(project.data.pending_approvals())\n"
        "heavy = [m for m in ('langchain_core', 'langgraph', 'openai') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=invincat_env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        cwd=os.sep,
        check=True,
    )
    assert out.stdout.strip() == "[]", out.stderr


async def test_the_store_change_feed_reports_a_change_made_elsewhere(
    invincat_monkeyenv: dict[str, str], workspace: Path
) -> None:
    """The core's store watch (runtime/project/store_watch.py) sees a batch another writer
    journaled (here a second MemoryService, as `invincat memory` in a terminal would) and
    tells every subscriber, even when one of them fails."""
    from invincat_server.runtime.memory import MemoryService
    from invincat_server.runtime.project.store_watch import StoreChange, StoreWatch

    project = Projects(load_settings()).open(workspace)
    reader = project.data.memory_reader()
    assert reader is not None
    watch = StoreWatch()
    heard: asyncio.Queue[StoreChange] = asyncio.Queue()

    def broken(change: StoreChange) -> None:
        raise RuntimeError("a front end's bug")

    watch.changes.add(broken)
    watch.changes.add(heard.put_nowait)
    watch.watch(reader.files.values(), project.root)
    other = MemoryService(project.settings.home, project.root)
    operation = {
        "scope": "project",
        "op": "create",
        "section": "Testing",
        "content": "Run pytest -q",
        "confidence": "high",
        "score": 85,
        "score_reason": "the user asked to remember it",
    }
    report = await asyncio.to_thread(
        other.apply, "project", {"operations": [operation]}, actor="user"
    )
    assert report.changed, report.to_json()
    try:
        async with asyncio.timeout(DEADLINE):
            change = await heard.get()
    finally:
        await watch.close()
    assert change == StoreChange("project", report.batch_id, project.root)
