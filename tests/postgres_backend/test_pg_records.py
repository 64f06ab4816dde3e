"""runtime/pg_records.py and pg_reads.py on the real server: the rules of records.py
(first decision wins, first title wins, scoped by project folder) across connections, and
bad input — a NUL byte, a huge title, a damaged row — costs that item only."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from invincat_server.runtime import pg_reads
from invincat_server.runtime.config import Settings
from invincat_server.runtime.pg_records import PgRecords
from invincat_server.runtime.thread_store import anything_saved, latest_messages, read_saved

psycopg = pytest.importorskip("psycopg")


def _settings(url: str, home: Path) -> Settings:
    return Settings(home=home, model=None, base_url=None, api_key=None, database_url=url)


def test_nothing_saved_yet_reads_as_empty_without_creating_tables(
    pg_url: str, tmp_path: Path
) -> None:
    settings = _settings(pg_url, tmp_path)
    assert not anything_saved(settings)
    assert read_saved(settings) == ([], [])
    assert latest_messages(settings, "t_none") == []
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('invincat_threads')").fetchone() == (None,)


async def test_tables_are_created_once_by_processes_opening_together(
    pg_url: str, tmp_path: Path
) -> None:
    opened = await asyncio.gather(*(PgRecords.open(pg_url, tmp_path) for _ in range(4)))
    for records in opened:
        await records.close()
    assert anything_saved(_settings(pg_url, tmp_path))


async def test_first_decision_wins_across_connections_and_titles_stay_first(
    pg_url: str, tmp_path: Path
) -> None:
    one = await PgRecords.open(pg_url, tmp_path)
    two = await PgRecords.open(pg_url, tmp_path / "other-machine")
    try:
        await one.touch_thread("t_1", "first title", "/p/a")
        await two.touch_thread("t_1", "second title", "/p/a")
        await one.touch_thread("t_2", "elsewhere", "/p/b")
        assert (await two.thread("t_1")).title == "first title"  # type: ignore[union-attr]
        assert [t.thread_id for t in await two.threads("/p/a")] == ["t_1"]
        assert {t.thread_id for t in await two.threads()} == {"t_1", "t_2"}

        await one.add_approval("a_1", "t_1", "b_1", {"type": "approval_requested", "n": 1})
        await two.add_approval("a_1", "t_1", "b_1", {"type": "changed"})  # re-found: kept
        wins = await asyncio.gather(
            one.claim("a_1", {"type": "approve"}), two.claim("a_1", {"type": "reject"})
        )
        assert sorted(wins) == [False, True]
        record = await two.approval("a_1")
        assert record is not None and record.status == "resolved"
        assert record.request == {"type": "approval_requested", "n": 1}
        assert await one.pending() == []
    finally:
        await one.close()
        await two.close()


async def test_nul_bytes_huge_titles_and_damaged_rows_cost_only_that_item(
    pg_url: str, tmp_path: Path
) -> None:
    records = await PgRecords.open(pg_url, tmp_path)
    try:
        await records.touch_thread("t_nul", "before\x00after " + "x" * 100_000, "/p")
        info = await records.thread("t_nul")
        assert info is not None and "\x00" not in info.title and len(info.title) <= 80
        # An id holding a NUL names nothing stored: "unknown", not a crash.
        assert await records.thread("t_\x00") is None
        assert await records.approval("a_\x00") is None
        assert await records.claim("a_\x00", {}) is False
        assert await records.pending("t_\x00") == []
        assert await records.delete_thread("t_\x00") is False
        await records.record_memory_failure("t_nul", "reason\x00with nul")
        cursor = await records.memory_cursor("t_nul")
        assert cursor is not None and cursor.last_rejection == "reason\ufffdwith nul"
        assert cursor.failures == 1
        await records.advance_memory_cursor("t_nul", 4, "anchor")
        cursor = await records.memory_cursor("t_nul")
        assert cursor is not None and (cursor.position, cursor.anchor) == (4, "anchor")
        assert cursor.last_rejection is None

        await records.add_approval("a_good", "t_nul", "b", {"type": "approval_requested"})
        await records.add_approval("a_bad", "t_nul", "b", {"type": "approval_requested"})
        await records.add_approval("a_list", "t_nul", "b", {"type": "approval_requested"})
    finally:
        await records.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE invincat_approvals SET request_json = 'not json' WHERE approval_id = 'a_bad'"
        )
        conn.execute(
            "UPDATE invincat_approvals SET request_json = %s WHERE approval_id = 'a_list'",
            (json.dumps([1, 2]),),
        )
    threads, pending = pg_reads.read_saved(pg_url)
    assert [t.thread_id for t in threads] == ["t_nul"]
    assert [r.approval_id for r in pending] == ["a_good"]
    assert pg_reads.read_saved(pg_url, "/p\x00") == ([], [])
    assert pg_reads.latest_messages(pg_url, "t_\x00") == []
