"""Thread, approval and memory-cursor records in PostgreSQL (`database_url` is set).

The same three tables, the same rules and the same methods as runtime/records.py keeps in
threads.sqlite (the thread list with its first title, approvals with a first-decision-wins
status, the memory agent's cursor), so whichever backend runtime/thread_store.py chose, the
Session, the approval broker and `invincat threads` behave alike. Conversations themselves
are LangGraph's AsyncPostgresSaver's tables (`checkpoints`, `checkpoint_blobs`,
`checkpoint_writes`); pruning them after a turn is the saver's own `aprune(keep_latest)`.

Differences from SQLite, on purpose: no file to vacuum (PostgreSQL's autovacuum reclaims
space), and an identity column `seq` stands in for SQLite's rowid (insertion order).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime import database
from invincat_server.runtime.records import ApprovalRecord, MemoryCursor, ThreadInfo

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger("invincat.pg_records")

# One key for every process creating the tables at once: CREATE TABLE IF NOT EXISTS is not
# safe against a concurrent one (a unique violation in pg_type), so creation is serialised.
SCHEMA_LOCK = 0x1A7C_0026
# LangGraph's setup() runs its migrations without such a lock; taken around it too.
SAVER_SETUP_LOCK = 0x1A7C_0027

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS invincat_threads (
        thread_id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        workspace TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        seq BIGINT GENERATED ALWAYS AS IDENTITY
    )""",
    """CREATE TABLE IF NOT EXISTS invincat_approvals (
        approval_id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        batch_id TEXT NOT NULL,
        request_json TEXT NOT NULL,
        status TEXT NOT NULL,
        decision_json TEXT,
        created_at TEXT NOT NULL,
        resolved_at TEXT,
        seq BIGINT GENERATED ALWAYS AS IDENTITY
    )""",
    "CREATE INDEX IF NOT EXISTS invincat_approvals_thread ON invincat_approvals(thread_id, status)",
    """CREATE TABLE IF NOT EXISTS invincat_memory_cursor (
        thread_id TEXT PRIMARY KEY,
        position INTEGER NOT NULL,
        anchor TEXT NOT NULL,
        last_rejection TEXT,
        failures INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL
    )""",
)

THREAD_COLUMNS = "thread_id, title, workspace, created_at, updated_at"
APPROVAL_COLUMNS = "approval_id, thread_id, batch_id, request_json, status, decision_json"
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
# What LangGraph's saver may not answer while another writer changes the same thread's
# rows (aprune documents both); pruning is retried after the next turn.
_PRUNE_RACES = ("SerializationFailure", "DeadlockDetected")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def storable(*texts: str | None) -> bool:
    """Whether PostgreSQL's text columns can hold these (they refuse NUL). An id that
    cannot be stored names nothing stored: lookups answer "none" instead of failing."""
    return not any(text is not None and "\x00" in text for text in texts)


def text_for_column(text: str) -> str:
    """`text` with NULs shown as U+FFFD (SQLite keeps them; PostgreSQL's text refuses)."""
    return text.replace("\x00", "\ufffd")


def thread_keys(thread_id: str) -> tuple[str, tuple[Any, ...]]:
    """WHERE clause for a thread's checkpoint keys: the main agent's (the thread id) and
    those derived from it (`<thread id>/planner`). Not LIKE: ids contain `_`, a wildcard."""
    prefix = thread_id + "/"
    return "(thread_id = %s OR left(thread_id, %s) = %s)", (thread_id, len(prefix), prefix)


def approval_record(row: Any) -> ApprovalRecord | None:
    """The row as a record; None (logged) when its JSON was damaged in the table: one bad
    row costs that approval only, never the whole list."""
    try:
        request = json.loads(row[3])
        decision = json.loads(row[5]) if row[5] else None
        if not isinstance(request, dict) or not isinstance(decision, dict | None):
            raise ValueError("not a JSON object")
    except (TypeError, ValueError) as exc:
        log.warning("approval %r in invincat_approvals is unreadable (%s); skipped", row[0], exc)
        return None
    return ApprovalRecord(row[0], row[1], row[2], request, row[4], decision)


def approval_records(rows: Any) -> list[ApprovalRecord]:
    return [record for row in rows if (record := approval_record(row)) is not None]


class PgRecords:
    """Async access to the thread and approval tables in PostgreSQL; the methods of
    runtime/records.py's Records (runtime/thread_store.py's ThreadRecords)."""

    def __init__(
        self, conn: psycopg.AsyncConnection[Any], home: Path, saver: Any | None = None
    ) -> None:
        self._conn = conn
        self._home = home
        self._saver = saver
        # One connection, many tasks: a transaction belongs to the connection, so the
        # statements of one must not interleave with another task's.
        self._turn = asyncio.Lock()

    @classmethod
    async def open(cls, url: str, home: Path, saver: Any | None = None) -> PgRecords:
        """Connect (DatabaseUnavailableError, redacted, when that fails) and create the
        tables if they are missing. `saver`: the stack's AsyncPostgresSaver, which prunes."""
        conn = await database.connect_async(url)
        try:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                for statement in SCHEMA:
                    await conn.execute(statement)
        except BaseException:
            await conn.close()
            raise
        return cls(conn, home, saver)

    async def close(self) -> None:
        await self._conn.close()

    @contextlib.asynccontextmanager
    async def _writing(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """One transaction, committed at the end or rolled back if anything in it fails."""
        async with self._turn, self._conn.transaction():
            yield self._conn

    async def _rows(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        async with self._turn:
            cur = await self._conn.execute(query, params)
            return list(await cur.fetchall())

    # memory-agent cursors (MemoryCursors) -------------------------------------
    async def memory_cursor(self, thread_id: str) -> MemoryCursor | None:
        if not storable(thread_id):
            return None
        rows = await self._rows(
            "SELECT thread_id, position, anchor, last_rejection, failures "
            "FROM invincat_memory_cursor WHERE thread_id = %s",
            (thread_id,),
        )
        return MemoryCursor(*rows[0]) if rows else None

    async def advance_memory_cursor(self, thread_id: str, position: int, anchor: str) -> None:
        async with self._writing() as conn:
            await conn.execute(
                "INSERT INTO invincat_memory_cursor VALUES (%s, %s, %s, NULL, 0, %s) "
                "ON CONFLICT (thread_id) DO UPDATE SET position = excluded.position, "
                "anchor = excluded.anchor, last_rejection = NULL, "
                "updated_at = excluded.updated_at",
                (thread_id, position, anchor, _now()),
            )

    async def record_memory_failure(self, thread_id: str, reason: str) -> None:
        async with self._writing() as conn:
            await conn.execute(
                "INSERT INTO invincat_memory_cursor VALUES (%s, 0, '', %s, 1, %s) "
                "ON CONFLICT (thread_id) DO UPDATE SET "
                "last_rejection = excluded.last_rejection, "
                "failures = invincat_memory_cursor.failures + 1, "
                "updated_at = excluded.updated_at",
                (thread_id, text_for_column(reason[:2_000]), _now()),
            )

    # threads -----------------------------------------------------------------
    async def touch_thread(self, thread_id: str, title: str, workspace: str) -> None:
        """Record the thread (its first title wins), the title made safe to store here
        (runtime/titles.py), as Records.touch_thread does."""
        from invincat_server.runtime.titles import thread_title

        title = text_for_column(thread_title(title))
        now = _now()
        async with self._writing() as conn:
            await conn.execute(
                f"INSERT INTO invincat_threads ({THREAD_COLUMNS}) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at",
                (thread_id, title, workspace, now, now),
            )

    async def threads(self, workspace: str | None = None) -> list[ThreadInfo]:
        query = f"SELECT {THREAD_COLUMNS} FROM invincat_threads"
        params: tuple[str, ...] = ()
        if not storable(workspace):
            return []
        if workspace is not None:
            query += " WHERE workspace = %s"
            params = (workspace,)
        rows = await self._rows(query + " ORDER BY updated_at DESC, seq DESC", params)
        return [ThreadInfo(*row) for row in rows]

    async def threads_older_than(self, cutoff: datetime) -> list[ThreadInfo]:
        """Threads last used before `cutoff` (UTC), oldest first."""
        stamp = cutoff.astimezone(UTC).isoformat(timespec="seconds")
        rows = await self._rows(
            f"SELECT {THREAD_COLUMNS} FROM invincat_threads WHERE updated_at <= %s "
            "ORDER BY updated_at, seq",
            (stamp,),
        )
        return [ThreadInfo(*row) for row in rows]

    async def thread(self, thread_id: str) -> ThreadInfo | None:
        if not storable(thread_id):
            return None
        rows = await self._rows(
            f"SELECT {THREAD_COLUMNS} FROM invincat_threads WHERE thread_id = %s", (thread_id,)
        )
        return ThreadInfo(*rows[0]) if rows else None

    # approvals ---------------------------------------------------------------
    async def add_approval(
        self, approval_id: str, thread_id: str, batch_id: str, request: dict[str, Any]
    ) -> None:
        # DO NOTHING: re-discovering an interrupt after a restart must not reset its status.
        async with self._writing() as conn:
            await conn.execute(
                "INSERT INTO invincat_approvals "
                "(approval_id, thread_id, batch_id, request_json, status, created_at) "
                "VALUES (%s, %s, %s, %s, 'pending', %s) ON CONFLICT (approval_id) DO NOTHING",
                (approval_id, thread_id, batch_id, json.dumps(request), _now()),
            )

    async def claim(self, approval_id: str, decision: dict[str, Any]) -> bool:
        """Record `decision` if the approval is still pending; False if someone won first
        (another process too: the UPDATE's row lock decides)."""
        if not storable(approval_id):
            return False
        async with self._writing() as conn:
            cur = await conn.execute(
                "UPDATE invincat_approvals SET status = 'resolved', decision_json = %s, "
                "resolved_at = %s WHERE approval_id = %s AND status = 'pending'",
                (json.dumps(decision), _now(), approval_id),
            )
        return cur.rowcount == 1

    async def close_pending(self, thread_id: str, status: str) -> None:
        if not storable(thread_id):
            return
        async with self._writing() as conn:
            await conn.execute(
                "UPDATE invincat_approvals SET status = %s, resolved_at = %s "
                "WHERE thread_id = %s AND status = 'pending'",
                (status, _now(), thread_id),
            )

    async def approval(self, approval_id: str) -> ApprovalRecord | None:
        if not storable(approval_id):
            return None
        rows = await self._rows(
            f"SELECT {APPROVAL_COLUMNS} FROM invincat_approvals WHERE approval_id = %s",
            (approval_id,),
        )
        return approval_record(rows[0]) if rows else None

    async def batch(self, batch_id: str) -> list[ApprovalRecord]:
        if not storable(batch_id):
            return []
        rows = await self._rows(
            f"SELECT {APPROVAL_COLUMNS} FROM invincat_approvals WHERE batch_id = %s ORDER BY seq",
            (batch_id,),
        )
        return approval_records(rows)

    async def pending(self, thread_id: str | None = None) -> list[ApprovalRecord]:
        query = f"SELECT {APPROVAL_COLUMNS} FROM invincat_approvals WHERE status = 'pending'"
        params: tuple[str, ...] = ()
        if not storable(thread_id):
            return []
        if thread_id is not None:
            query += " AND thread_id = %s"
            params = (thread_id,)
        rows = await self._rows(query + " ORDER BY seq", params)
        return approval_records(rows)

    # storage -------------------------------------------------------------------
    async def prune_checkpoints(self, thread_id: str) -> int:
        """Keep only the latest checkpoint of the thread's keys (main agent, planner):
        LangGraph's `aprune(keep_latest)`, which reads one snapshot, so what a running turn
        saves meanwhile is neither seen nor deleted. Returns how many keys were pruned (the
        saver does not count checkpoints); 0 without a saver (no stack: nothing to prune)."""
        if self._saver is None:
            return 0
        keys = await self._checkpoint_keys(thread_id)
        if not keys:
            return 0
        try:
            await self._saver.aprune(keys, strategy="keep_latest")
        except Exception as exc:
            if type(exc).__name__ not in _PRUNE_RACES:
                raise
            log.info(
                "pruning %s met a concurrent write (%s); retried after a later turn",
                thread_id,
                type(exc).__name__,
            )
            return 0
        return len(keys)

    async def delete_thread(self, thread_id: str) -> bool:
        """Delete the thread, its checkpoints (main agent, planner), approvals, memory
        cursor and rewind checkpoints. False if there was no such thread."""
        if await self.thread(thread_id) is None:
            return False
        where, params = thread_keys(thread_id)
        present = await self._checkpoint_tables()
        async with self._writing() as conn:
            for table in present:
                await conn.execute(f"DELETE FROM {table} WHERE {where}", params)
            for table in ("invincat_approvals", "invincat_memory_cursor", "invincat_threads"):
                await conn.execute(f"DELETE FROM {table} WHERE thread_id = %s", (thread_id,))
        # Rewind checkpoints are files of this machine's home (every front end deletes
        # through here); another machine's stay until it prunes them by size.
        from invincat_server.runtime.checkpoints.pruning import delete_thread_checkpoints

        await asyncio.to_thread(delete_thread_checkpoints, self._home, thread_id)
        return True

    async def reclaim_space(self) -> None:
        """Nothing to do: PostgreSQL's autovacuum reuses the space of deleted rows."""

    async def _checkpoint_keys(self, thread_id: str) -> list[str]:
        if not storable(thread_id) or "checkpoints" not in await self._checkpoint_tables():
            return []
        where, params = thread_keys(thread_id)
        rows = await self._rows(f"SELECT DISTINCT thread_id FROM checkpoints WHERE {where}", params)
        return [str(row[0]) for row in rows]

    async def _checkpoint_tables(self) -> list[str]:
        """LangGraph's tables that exist (none before a stack ever ran on this database)."""
        rows = await self._rows(
            "SELECT name FROM unnest(%s::text[]) AS name WHERE to_regclass(name) IS NOT NULL",
            (list(CHECKPOINT_TABLES),),
        )
        return [str(row[0]) for row in rows]
