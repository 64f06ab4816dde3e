"""An in-process Session on PostgreSQL: the light reader (pg_reads.py, no LangGraph) reads
the same history the agent stack does, a conversation rewind and a delete work on the
saver's tables, and nothing is written to threads.sqlite."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.project_data import ProjectData
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

psycopg = pytest.importorskip("psycopg")


def _keys(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
    return {row[0] for row in rows}


async def test_history_rewind_and_delete_on_postgres(
    make_session: SessionFactory,
    fake_openai: FakeOpenAIServer,
    pg_url: str,
    workspace: Path,
    invincat_home: Path,
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
            {"content": "It says alpha."},
            {"content": "Second answer."},
        ]
    )
    session = await make_session(INVINCAT_DATABASE_URL=pg_url)
    thread, _ = await run_turn(session, "read a.txt")
    await run_turn(session, "and again", thread)

    from_stack = await session.history(thread)
    light = await ProjectData(session.settings, workspace).history(thread)
    assert light == from_stack
    assert [m.get("role") for m in from_stack].count("user") == 2
    assert any("alpha" in str(m.get("content")) for m in from_stack)

    assert await session.rewind_conversation(thread, 1) >= 1
    after = await ProjectData(session.settings, workspace).history(thread)
    assert after is not None and [m.get("role") for m in after].count("user") == 0

    assert _keys(pg_url) == {thread}
    await session.delete_thread(thread)
    assert _keys(pg_url) == set() and await session.threads() == []
    assert not (invincat_home / "threads.sqlite").exists()
