"""Thread and approval records in `$INVINCAT_HOME/threads.sqlite` (the default backend;
runtime/pg_records.py keeps the same in PostgreSQL when `database_url` is set).

LangGraph's checkpointer owns the conversation state in the same file; these two small
tables add what it does not index: a thread list with titles, and approval requests with
a first-decision-wins status that several front ends (or processes) may race on.

This module also keeps the file small. LangGraph's SQLite saver writes a complete
checkpoint (the whole message list: our state uses the `add_messages` reducer, whose
checkpoints are self-contained, not a delta channel) after every step, so a thread's
storage grows with the square of its length. Everything Invincat reads needs only the
latest checkpoint of each (thread key, namespace) and the writes attached to it: history
and `--resume` read the latest state, a pending approval is an interrupt write on the
latest checkpoint, and the memory agent's cursor is a message position in its own table.
So after each turn the older checkpoints of that thread are deleted and the freed pages
returned to the file system (`auto_vacuum = INCREMENTAL`). Time travel to an older
checkpoint is given up; nothing in Invincat offers it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiosqlite

from invincat_server.runtime import private_files

if TYPE_CHECKING:
    from invincat_server.runtime.thread_store import ThreadRecords

log = logging.getLogger("invincat.records")

# SQLite's `PRAGMA auto_vacuum` value for INCREMENTAL.
_AUTO_VACUUM_INCREMENTAL = 2
_WAL_LIMIT_BYTES = 4 * 1024 * 1024
# How long switching a new threads file to WAL keeps trying while another connection
# writes to it: the same as the busy timeout every connection here uses.
_WAL_SWITCH_SECONDS = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS invincat_threads (
    thread_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    workspace TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS invincat_approvals (
    approval_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    request_json TEXT NOT NULL,
    status TEXT NOT NULL,          -- pending | resolved | cancelled | superseded
    decision_json TEXT,
    created_at TEXT NOT NULL,
    resolved_at TEXT
);
CREATE INDEX IF NOT EXISTS invincat_approvals_thread ON invincat_approvals(thread_id, status);
CREATE TABLE IF NOT EXISTS invincat_memory_cursor (
    thread_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,     -- messages[:position] were processed by the memory agent
    anchor TEXT NOT NULL,          -- fingerprint of messages[position - 1]
    last_rejection TEXT,           -- why the last proposal was refused (told to the next run)
    failures INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);
"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class ThreadInfo:
    thread_id: str
    title: str
    workspace: str
    created_at: str
    updated_at: str

    def to_json_dict(self) -> dict[str, str]:
        return {
            "thread_id": self.thread_id,
            "title": self.title,
            "workspace": self.workspace,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True)
class ApprovalRecord:
    approval_id: str
    thread_id: str
    batch_id: str
    request: dict[str, Any]
    status: str
    decision: dict[str, Any] | None


class Records:
    """Async access to the thread and approval tables."""

    def __init__(self, conn: aiosqlite.Connection, path: Path | None = None) -> None:
        self._conn = conn
        self._path = path
        self._write_turn = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path) -> Records:
        # Created 0600 before SQLite does: its -wal and -shm files take the database's mode.
        private_files.prepare_sqlite(path, root=path.parent)
        conn = await aiosqlite.connect(path, timeout=30)
        await conn.execute("PRAGMA busy_timeout=30000")
        await prepare_file(conn)
        await conn.executescript(_SCHEMA)
        await conn.commit()
        return cls(conn, path)

    async def close(self) -> None:
        await self._conn.close()

    @contextlib.asynccontextmanager
    async def _writing(self) -> AsyncIterator[None]:
        """One write transaction that takes the write lock first (BEGIN IMMEDIATE), then
        commits, or rolls back if anything in it fails.

        Not Python's implicit deferred BEGIN: that reads before it writes, and if the
        checkpointer's connection (or another process) commits in between, SQLite answers
        "database is locked" at once, without the busy timeout (the snapshot is stale),
        and the transaction stays open: every later write of this connection then fails
        the same way. Taking the lock first waits for the other writer instead. A write
        cancelled half-way (Ctrl-C) is rolled back rather than left holding the lock.

        One at a time per connection: tasks share it (the last turn's housekeeping runs
        while the next turn records its thread), and a transaction belongs to the
        connection, not to the task that began it."""
        async with self._write_turn:
            try:
                # Inside the try: cancelled while waiting for the lock, the BEGIN still runs
                # in aiosqlite's thread; the rollback queued behind it ends that transaction.
                await self._conn.execute("BEGIN IMMEDIATE")
                yield
            except BaseException:
                with contextlib.suppress(sqlite3.Error, ValueError):
                    await self._conn.rollback()
                raise
            await self._conn.commit()

    # memory-agent cursors (MemoryCursors) -------------------------------------
    async def memory_cursor(self, thread_id: str) -> MemoryCursor | None:
        async with self._conn.execute(
            "SELECT thread_id, position, anchor, last_rejection, failures "
            "FROM invincat_memory_cursor WHERE thread_id = ?",
            (thread_id,),
        ) as cur:
            row = await cur.fetchone()
        return MemoryCursor(*row) if row else None

    async def advance_memory_cursor(self, thread_id: str, position: int, anchor: str) -> None:
        async with self._writing():
            await self._conn.execute(
                "INSERT INTO invincat_memory_cursor VALUES (?, ?, ?, NULL, 0, ?) "
                "ON CONFLICT(thread_id) DO UPDATE SET position = excluded.position, "
                "anchor = excluded.anchor, last_rejection = NULL, updated_at = excluded.updated_at",
                (thread_id, position, anchor, _now()),
            )

    async def record_memory_failure(self, thread_id: str, reason: str) -> None:
        async with self._writing():
            await self._conn.execute(
                "INSERT INTO invincat_memory_cursor VALUES (?, 0, '', ?, 1, ?) "
                "ON CONFLICT(thread_id) DO UPDATE SET last_rejection = excluded.last_rejection, "
                "failures = failures + 1, updated_at = excluded.updated_at",
                (thread_id, reason[:2_000], _now()),
            )

    # threads -----------------------------------------------------------------
    async def touch_thread(self, thread_id: str, title: str, workspace: str) -> None:
        """Record the thread (its first title wins); `title` is made safe to store here,
        whoever calls (see runtime/titles.py)."""
        from invincat_server.runtime.titles import thread_title

        title = thread_title(title)  # before the write turn: redaction takes a moment
        now = _now()
        async with self._writing():
            await self._conn.execute(
                "INSERT INTO invincat_threads VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(thread_id) DO UPDATE SET updated_at = excluded.updated_at",
                (thread_id, title, workspace, now, now),
            )

    async def threads(self, workspace: str | None = None) -> list[ThreadInfo]:
        query = "SELECT * FROM invincat_threads"
        params: tuple[str, ...] = ()
        if workspace is not None:
            query += " WHERE workspace = ?"
            params = (workspace,)
        async with self._conn.execute(
            query + " ORDER BY updated_at DESC, rowid DESC", params
        ) as cur:
            return [ThreadInfo(*row) async for row in cur]

    async def threads_older_than(self, cutoff: datetime) -> list[ThreadInfo]:
        """Threads last used before `cutoff` (UTC), oldest first."""
        stamp = cutoff.astimezone(UTC).isoformat(timespec="seconds")
        async with self._conn.execute(
            "SELECT * FROM invincat_threads WHERE updated_at <= ? ORDER BY updated_at, rowid",
            (stamp,),
        ) as cur:
            return [ThreadInfo(*row) async for row in cur]

    async def thread(self, thread_id: str) -> ThreadInfo | None:
        async with self._conn.execute(
            "SELECT * FROM invincat_threads WHERE thread_id = ?", (thread_id,)
        ) as cur:
            row = await cur.fetchone()
        return ThreadInfo(*row) if row else None

    # approvals ---------------------------------------------------------------
    async def add_approval(
        self, approval_id: str, thread_id: str, batch_id: str, request: dict[str, Any]
    ) -> None:
        # OR IGNORE: re-discovering an interrupt after a restart must not reset its status.
        async with self._writing():
            await self._conn.execute(
                "INSERT OR IGNORE INTO invincat_approvals "
                "(approval_id, thread_id, batch_id, request_json, status, created_at) "
                "VALUES (?, ?, ?, ?, 'pending', ?)",
                (approval_id, thread_id, batch_id, json.dumps(request), _now()),
            )

    async def claim(self, approval_id: str, decision: dict[str, Any]) -> bool:
        """Record `decision` if the approval is still pending; False if someone won first."""
        async with self._writing():
            cur = await self._conn.execute(
                "UPDATE invincat_approvals SET status = 'resolved', decision_json = ?, "
                "resolved_at = ? WHERE approval_id = ? AND status = 'pending'",
                (json.dumps(decision), _now(), approval_id),
            )
        return cur.rowcount == 1

    async def close_pending(self, thread_id: str, status: str) -> None:
        async with self._writing():
            await self._conn.execute(
                "UPDATE invincat_approvals SET status = ?, resolved_at = ? "
                "WHERE thread_id = ? AND status = 'pending'",
                (status, _now(), thread_id),
            )

    async def approval(self, approval_id: str) -> ApprovalRecord | None:
        async with self._conn.execute(
            "SELECT approval_id, thread_id, batch_id, request_json, status, decision_json "
            "FROM invincat_approvals WHERE approval_id = ?",
            (approval_id,),
        ) as cur:
            row = await cur.fetchone()
        return _record(row) if row else None

    async def batch(self, batch_id: str) -> list[ApprovalRecord]:
        async with self._conn.execute(
            "SELECT approval_id, thread_id, batch_id, request_json, status, decision_json "
            "FROM invincat_approvals WHERE batch_id = ? ORDER BY rowid",
            (batch_id,),
        ) as cur:
            return [_record(row) async for row in cur]

    async def pending(self, thread_id: str | None = None) -> list[ApprovalRecord]:
        query = (
            "SELECT approval_id, thread_id, batch_id, request_json, status, decision_json "
            "FROM invincat_approvals WHERE status = 'pending'"
        )
        params: tuple[str, ...] = ()
        if thread_id is not None:
            query += " AND thread_id = ?"
            params = (thread_id,)
        async with self._conn.execute(query + " ORDER BY rowid", params) as cur:
            return [_record(row) async for row in cur]

    # storage -------------------------------------------------------------------
    async def prune_checkpoints(self, thread_id: str) -> int:
        """Delete every checkpoint of the thread but the latest per key and namespace
        (and the writes of the deleted ones); returns how many checkpoints went.

        Safe while a turn of the thread runs: checkpoint ids grow with time, and only ids
        below the newest one at the moment of the statement are deleted.
        """
        if not await self._has_checkpoint_tables():
            return 0
        where, params = _thread_keys(thread_id)
        newer = (
            "{table}.checkpoint_id < (SELECT MAX(c.checkpoint_id) FROM checkpoints c "
            "WHERE c.thread_id = {table}.thread_id AND c.checkpoint_ns = {table}.checkpoint_ns)"
        )
        async with self._writing():
            cur = await self._conn.execute(
                f"DELETE FROM checkpoints WHERE ({where}) AND " + newer.format(table="checkpoints"),
                params,
            )
            deleted = cur.rowcount
            await self._conn.execute(
                f"DELETE FROM writes WHERE ({where}) AND " + newer.format(table="writes"), params
            )
        return deleted

    async def prune_all_checkpoints(self) -> None:
        """`prune_checkpoints` for every thread in the file (upgrading an old file)."""
        if not await self._has_checkpoint_tables():
            return
        async with self._conn.execute("SELECT DISTINCT thread_id FROM checkpoints") as cur:
            keys = [row[0] async for row in cur]
        for key in keys:
            await self.prune_checkpoints(key)

    async def delete_thread(self, thread_id: str) -> bool:
        """Delete the thread, its checkpoints (main agent, planner, subagents), approvals,
        memory cursor and rewind checkpoints. False if there was no such thread."""
        if await self.thread(thread_id) is None:
            return False
        checkpoints = await self._has_checkpoint_tables()
        async with self._writing():
            if checkpoints:
                where, params = _thread_keys(thread_id)
                await self._conn.execute(f"DELETE FROM checkpoints WHERE {where}", params)
                await self._conn.execute(f"DELETE FROM writes WHERE {where}", params)
            for table in ("invincat_approvals", "invincat_memory_cursor", "invincat_threads"):
                await self._conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))
        if self._path is not None:
            # Its rewind checkpoints go with it (every front end deletes through here).
            from invincat_server.runtime.checkpoints.pruning import delete_thread_checkpoints

            await asyncio.to_thread(delete_thread_checkpoints, self._path.parent, thread_id)
        return True

    async def reclaim_space(self) -> None:
        """Give pages freed by pruning back to the file system.

        A file created before pruning existed has no incremental auto-vacuum; it is
        converted once (prune every thread, then a full VACUUM). A VACUUM that cannot get
        the database (another process is in a transaction) is retried after a later turn.
        """
        mode = await self._scalar("PRAGMA auto_vacuum")
        try:
            # Under the connection's write turn: executescript COMMITs first and VACUUM needs
            # no open transaction, so neither may run inside another task's write.
            if mode == _AUTO_VACUUM_INCREMENTAL:
                async with self._write_turn:
                    # executescript, not execute: Python's sqlite3 steps a PRAGMA that
                    # returns no rows only once, and each step frees just one page.
                    await self._conn.executescript("PRAGMA incremental_vacuum;")
            else:
                log.info("threads.sqlite: pruning old checkpoints and enabling auto-vacuum")
                await self.prune_all_checkpoints()
                async with self._write_turn:
                    await self._conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                    await self._conn.execute("VACUUM")
            # Copy the WAL into the file now and empty it, so neither keeps the turn's
            # superseded checkpoints. Without waiting: if another connection is busy,
            # SQLite's next automatic checkpoint does it.
            # (Its own connection: a zero busy timeout here must not make this
            # connection's other users fail while it runs.)
            if self._path is not None:
                await asyncio.to_thread(_truncate_wal, self._path)
        except sqlite3.OperationalError as exc:
            log.info("threads.sqlite: could not reclaim space now (%s); will retry", exc)

    async def _has_checkpoint_tables(self) -> bool:
        count = await self._scalar(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' "
            "AND name IN ('checkpoints', 'writes')"
        )
        return count == 2

    async def _scalar(self, query: str) -> Any:
        async with self._conn.execute(query) as cur:
            row = await cur.fetchone()
        return row[0] if row else None


def read_saved(
    path: Path, workspace: str | None = None
) -> tuple[list[ThreadInfo], list[ApprovalRecord]]:
    """(threads newest first, only `workspace`'s when given; approvals still pending) in
    the records file at `path`, in one synchronous read-only pass: the light read of
    runtime/project_data.py, which every front end lists threads through without the
    agent stack (`invincat threads list`, ACP's `session/list`, the language server
    while its stack loads).
    One `asyncio.to_thread` hop instead of aiosqlite's hop per statement, which matters
    while another thread holds the GIL importing. No file or no tables: nothing saved."""
    if not path.exists():
        return [], []
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        query = "SELECT * FROM invincat_threads"
        params: tuple[str, ...] = ()
        if workspace is not None:
            query += " WHERE workspace = ?"
            params = (workspace,)
        threads = [
            ThreadInfo(*row)
            for row in conn.execute(query + " ORDER BY updated_at DESC, rowid DESC", params)
        ]
        pending = [
            _record(row)
            for row in conn.execute(
                "SELECT approval_id, thread_id, batch_id, request_json, status, decision_json "
                "FROM invincat_approvals WHERE status = 'pending' ORDER BY rowid"
            )
        ]
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return [], []  # created by a process that never recorded a thread
        raise
    finally:
        conn.close()
    return threads, pending


async def prepare_file(conn: aiosqlite.Connection) -> None:
    """Create a new threads file with incremental auto-vacuum, so pages freed by pruning
    can be returned (the mode only takes effect before the first table exists; older
    files are converted by `Records.reclaim_space`). Per connection: once the WAL has been
    copied into the file, cut it back to 4 MB instead of keeping its largest size."""
    await conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    await conn.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT_BYTES}")


async def use_wal(conn: aiosqlite.Connection) -> None:
    """Put the threads file in WAL mode, so a second process (another editor window, the
    CLI) can read and resolve approvals while this one holds it open.

    On a file still in rollback mode the switch needs an exclusive lock, and SQLite answers
    "database is locked" at once, without its busy timeout, when another connection is
    writing (waiting could deadlock). That happens when two sessions create the file
    together: the projects of a multi-root window, or two windows on a fresh home. So wait
    here instead, for as long as the busy timeout would. Once the file is in WAL mode (a
    setting stored in the file) the switch is a no-op and never waits."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _WAL_SWITCH_SECONDS
    pause = 0.02
    while True:
        try:
            await conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or loop.time() + pause > deadline:
                raise
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.5)


def _truncate_wal(path: Path) -> None:
    conn = sqlite3.connect(path, timeout=0)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.OperationalError:
        pass  # busy: SQLite's next automatic checkpoint copies it
    finally:
        conn.close()


def _thread_keys(thread_id: str) -> tuple[str, tuple[Any, ...]]:
    """WHERE clause for the checkpoint keys of a thread: the main agent's (the thread id)
    and the planner's (`<thread id>/planner`). Not LIKE: ids contain `_`, a wildcard."""
    prefix = thread_id + "/"
    return "thread_id = ? OR substr(thread_id, 1, ?) = ?", (
        thread_id,
        len(prefix),
        prefix,
    )


@dataclass(frozen=True)
class MemoryCursor:
    thread_id: str
    position: int
    anchor: str
    last_rejection: str | None
    failures: int


class MemoryCursors:
    """Per-thread memory-agent progress, persisted next to the thread's checkpoints (in
    the records' tables, through their public methods)."""

    def __init__(self, records: ThreadRecords) -> None:
        self._records = records

    async def get(self, thread_id: str) -> MemoryCursor | None:
        return await self._records.memory_cursor(thread_id)

    async def advance(self, thread_id: str, position: int, anchor: str) -> None:
        await self._records.advance_memory_cursor(thread_id, position, anchor)

    async def record_failure(self, thread_id: str, reason: str) -> None:
        """Keep the cursor where it is; remember why, for the next attempt."""
        await self._records.record_memory_failure(thread_id, reason)


def _record(row: Any) -> ApprovalRecord:
    return ApprovalRecord(
        approval_id=row[0],
        thread_id=row[1],
        batch_id=row[2],
        request=json.loads(row[3]),
        status=row[4],
        decision=json.loads(row[5]) if row[5] else None,
    )
