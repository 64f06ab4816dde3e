"""Records' checkpoint pruning on a real SQLite file: which rows stay, and an old file
(written before pruning existed, without auto-vacuum) shrinks once converted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from invincat_server.runtime.records import Records

# The tables langgraph-checkpoint-sqlite creates (AsyncSqliteSaver.setup).
SAVER_SCHEMA = """
CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB,
    metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, task_path TEXT NOT NULL DEFAULT '',
    idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
"""

KEYS = [("t_a", ""), ("t_a", "tools:1"), ("t_a/planner", ""), ("tXa", "")]


def old_file(path: Path, checkpoints: int = 20) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(SAVER_SCHEMA)
        for thread, ns in KEYS:
            for n in range(checkpoints):
                cid = f"1f0-{n:04d}"
                conn.execute(
                    "INSERT INTO checkpoints VALUES (?, ?, ?, NULL, 'msgpack', ?, x'')",
                    (thread, ns, cid, b"x" * 50_000),
                )
                conn.execute(
                    "INSERT INTO writes VALUES (?, ?, ?, 'task', '', 0, '__interrupt__', "
                    "'msgpack', x'00')",
                    (thread, ns, cid),
                )


def rows(path: Path, table: str) -> dict[tuple[str, str], list[str]]:
    with sqlite3.connect(path) as conn:
        found: dict[tuple[str, str], list[str]] = {}
        for thread, ns, cid in conn.execute(
            f"SELECT thread_id, checkpoint_ns, checkpoint_id FROM {table} ORDER BY 1, 2, 3"
        ):
            found.setdefault((thread, ns), []).append(cid)
        return found


async def test_pruning_keeps_the_latest_checkpoint_and_its_writes_per_key(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    old_file(db, checkpoints=3)
    records = await Records.open(db)
    try:
        assert await records.prune_checkpoints("t_a") == 6  # main, subagent ns, planner
    finally:
        await records.close()
    latest = ["1f0-0002"]
    expected = {("t_a", ""): latest, ("t_a", "tools:1"): latest, ("t_a/planner", ""): latest}
    # "_" is a LIKE wildcard: a thread whose id only looks similar is untouched.
    expected[("tXa", "")] = ["1f0-0000", "1f0-0001", "1f0-0002"]
    assert rows(db, "checkpoints") == expected
    assert rows(db, "writes") == expected  # the pending interrupt of the latest stays


async def test_an_old_file_is_pruned_and_converted_to_incremental_vacuum(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    old_file(db)
    before = db.stat().st_size
    records = await Records.open(db)
    try:
        await records.reclaim_space()
    finally:
        await records.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone() == (2,)
    assert all(len(ids) == 1 for ids in rows(db, "checkpoints").values())
    assert db.stat().st_size < before / 10


async def test_deleting_a_thread_removes_every_key_and_record(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    old_file(db, checkpoints=2)
    records = await Records.open(db)
    try:
        await records.touch_thread("t_a", "title", "/ws")
        await records.add_approval("ap_1", "t_a", "b_1", {"tool_name": "write_file"})
        assert await records.delete_thread("t_a") is True
        assert await records.delete_thread("t_a") is False
        assert await records.thread("t_a") is None and await records.pending("t_a") == []
    finally:
        await records.close()
    assert set(rows(db, "checkpoints")) == {("tXa", "")}
