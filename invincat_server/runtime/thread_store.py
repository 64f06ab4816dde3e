"""Where threads, checkpoints and approval records are kept: chosen here, once, from Settings.

Unset `database_url` (the default): `$INVINCAT_HOME/threads.sqlite`, LangGraph's
AsyncSqliteSaver and runtime/records.py, exactly as before. Set: that PostgreSQL database,
LangGraph's AsyncPostgresSaver and runtime/pg_records.py (light reads: pg_reads.py), so
every machine of a user pointed at it sees the same threads and pending approvals. Every
caller — the agent stack, the light reads of ProjectData and rewind, `invincat threads` —
goes through the functions below; none asks which backend it is on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from invincat_server.runtime.config import Settings

if TYPE_CHECKING:
    from invincat_server.runtime.records import ApprovalRecord, MemoryCursor, ThreadInfo


class ThreadRecords(Protocol):
    """The thread, approval and memory-cursor records (runtime/records.py's Records on
    SQLite, runtime/pg_records.py's PgRecords on PostgreSQL)."""

    async def close(self) -> None: ...
    async def memory_cursor(self, thread_id: str) -> MemoryCursor | None: ...
    async def advance_memory_cursor(self, thread_id: str, position: int, anchor: str) -> None: ...
    async def record_memory_failure(self, thread_id: str, reason: str) -> None: ...
    async def touch_thread(self, thread_id: str, title: str, workspace: str) -> None: ...
    async def threads(self, workspace: str | None = None) -> list[ThreadInfo]: ...
    async def threads_older_than(self, cutoff: datetime) -> list[ThreadInfo]: ...
    async def thread(self, thread_id: str) -> ThreadInfo | None: ...
    async def add_approval(
        self, approval_id: str, thread_id: str, batch_id: str, request: dict[str, Any]
    ) -> None: ...
    async def claim(self, approval_id: str, decision: dict[str, Any]) -> bool: ...
    async def close_pending(self, thread_id: str, status: str) -> None: ...
    async def approval(self, approval_id: str) -> ApprovalRecord | None: ...
    async def batch(self, batch_id: str) -> list[ApprovalRecord]: ...
    async def pending(self, thread_id: str | None = None) -> list[ApprovalRecord]: ...
    async def prune_checkpoints(self, thread_id: str) -> int: ...
    async def delete_thread(self, thread_id: str) -> bool: ...
    async def reclaim_space(self) -> None: ...


@dataclass
class Checkpointing:
    """What the agent stack keeps conversations with: LangGraph's saver, our records over
    the same store, and how to release both."""

    saver: Any
    records: ThreadRecords
    close: Callable[[], Awaitable[None]]


async def open_checkpointing(settings: Settings) -> Checkpointing:
    """The saver and records of the chosen backend, their tables created if missing.
    PostgreSQL unreachable or refusing us: DatabaseUnavailableError (redacted)."""
    if settings.database_url:
        return await _open_postgres(settings.database_url, settings)
    return await _open_sqlite(settings)


async def open_records(settings: Settings) -> ThreadRecords:
    """The records alone, for a process that runs no turn (`invincat threads delete`)."""
    if settings.database_url:
        from invincat_server.runtime.pg_records import PgRecords

        return await PgRecords.open(settings.database_url, settings.home)
    from invincat_server.runtime.records import Records

    return await Records.open(settings.threads_db)


def anything_saved(settings: Settings) -> bool:
    """Whether any thread was ever saved (opening the records would create the store)."""
    if settings.database_url:
        from invincat_server.runtime.pg_reads import records_exist

        return records_exist(settings.database_url)
    return settings.threads_db.exists()


def read_saved(
    settings: Settings, workspace: str | None = None
) -> tuple[list[ThreadInfo], list[ApprovalRecord]]:
    """(threads newest first, only `workspace`'s when given; approvals still pending), in
    one synchronous read (run it in a worker thread). Nothing saved: ([], [])."""
    if settings.database_url:
        from invincat_server.runtime import pg_reads

        return pg_reads.read_saved(settings.database_url, workspace)
    from invincat_server.runtime.records import read_saved as read_sqlite

    return read_sqlite(settings.threads_db, workspace)


def latest_messages(settings: Settings, thread_key: str) -> list[dict[str, Any]] | None:
    """The thread key's latest messages as field dicts, without LangGraph; [] when it has
    none yet; None when the light reader cannot decode them (ask the Session)."""
    if settings.database_url:
        from invincat_server.runtime import pg_reads

        return pg_reads.latest_messages(settings.database_url, thread_key)
    from invincat_server.runtime.checkpoint_reader import latest_messages as read_sqlite

    return read_sqlite(settings.threads_db, thread_key)


def _closing(records: ThreadRecords, conn: Any) -> Callable[[], Awaitable[None]]:
    """Release the records, then the saver's connection (either backend's)."""

    async def close() -> None:
        await records.close()
        await conn.close()

    return close


async def _open_sqlite(settings: Settings) -> Checkpointing:
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from invincat_server.runtime import private_files
    from invincat_server.runtime.records import Records, prepare_file, use_wal

    private_files.prepare_sqlite(settings.threads_db, root=settings.home)
    conn = await aiosqlite.connect(settings.threads_db, timeout=30)
    try:
        await prepare_file(conn)  # before the saver creates the first table
        await use_wal(conn)
        await conn.execute("PRAGMA busy_timeout=30000")
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
        records = await Records.open(settings.threads_db)
    except BaseException:
        await conn.close()
        raise

    return Checkpointing(saver, records, _closing(records, conn))


async def _open_postgres(url: str, settings: Settings) -> Checkpointing:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row

    from invincat_server.runtime import database
    from invincat_server.runtime.pg_records import SAVER_SETUP_LOCK, PgRecords

    # What AsyncPostgresSaver needs of its connection: autocommit, rows as dicts, and no
    # prepared statements (a pooler in front of the server may not keep them).
    conn = await database.connect_async(url, row_factory=dict_row, prepare_threshold=0)
    try:
        saver = AsyncPostgresSaver(conn)
        # Two processes setting up a new database at once would race on its migrations.
        await conn.execute("SELECT pg_advisory_lock(%s)", (SAVER_SETUP_LOCK,))
        try:
            await saver.setup()
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (SAVER_SETUP_LOCK,))
        records = await PgRecords.open(url, settings.home, saver)
    except BaseException:
        await conn.close()
        raise

    return Checkpointing(saver, records, _closing(records, conn))
