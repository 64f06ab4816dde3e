"""Two sessions creating threads.sqlite together (the projects of a multi-root window, two
windows on a fresh home): the one that switches the file to WAL while the other writes
its first tables must wait, not fail with "database is locked" (CI saw a multi-root
project fail to start this way)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import aiosqlite

from invincat_server.runtime.records import use_wal


async def test_switching_to_wal_waits_for_another_connections_write(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")  # the other session, creating its tables
    writer.execute("CREATE TABLE other_session (x)")
    conn = await aiosqlite.connect(path, timeout=30)
    try:
        switch = asyncio.ensure_future(use_wal(conn))
        # SQLite answers this at once, without its busy timeout: without the wait the
        # task is already done here, with "database is locked".
        done, _ = await asyncio.wait({switch}, timeout=1.0)
        assert not done, switch.exception()
        writer.execute("COMMIT")
        await asyncio.wait_for(switch, timeout=60)
        async with conn.execute("PRAGMA journal_mode") as cur:
            assert await cur.fetchone() == ("wal",)
        async with conn.execute("SELECT name FROM sqlite_master") as cur:
            assert await cur.fetchall() == [("other_session",)]  # the other's write kept
    finally:
        await conn.close()
        writer.close()
