"""Writes to threads.sqlite from the records connection while other connections write too
(the checkpointer, another window, the CLI): a write waits for the lock, and one cancelled
half-way (Ctrl-C in the REPL) never leaves the file locked. CI saw a REPL die with
"database is locked" on every write after one failed write left its transaction open."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

from invincat_server.runtime.records import Records


async def test_a_write_waits_for_another_writer(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    records = await Records.open(path)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO invincat_threads VALUES ('t_other', 'x', '/w', 'a', 'a')")
        write = asyncio.ensure_future(records.touch_thread("t_mine", "mine", "/w"))
        done, _ = await asyncio.wait({write}, timeout=0.5)
        assert not done, write.exception()
        other.execute("COMMIT")
        await asyncio.wait_for(write, timeout=60)
        assert {t.thread_id for t in await records.threads()} == {"t_other", "t_mine"}
    finally:
        other.close()
        await records.close()


async def test_a_write_cancelled_while_waiting_leaves_no_lock_behind(tmp_path: Path) -> None:
    path = tmp_path / "threads.sqlite"
    records = await Records.open(path)
    other = sqlite3.connect(path, isolation_level=None, timeout=0, check_same_thread=False)
    try:
        other.execute("BEGIN IMMEDIATE")
        write = asyncio.ensure_future(records.touch_thread("t_cut", "cut", "/w"))
        done, _ = await asyncio.wait({write}, timeout=0.5)
        assert not done, write.exception()
        write.cancel()  # Ctrl-C; its statement still runs in aiosqlite's thread
        other.execute("COMMIT")
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(write, timeout=60)
        assert await records.thread("t_cut") is None  # after the cancelled write: rolled back
        other.execute("BEGIN IMMEDIATE")  # nobody holds the lock (timeout 0: fails if held)
        other.execute("ROLLBACK")
        await records.touch_thread("t_next", "next", "/w")  # the connection still writes
        assert await records.thread("t_next") is not None
    finally:
        other.close()
        await records.close()


async def test_writes_from_several_tasks_on_one_connection_each_commit(tmp_path: Path) -> None:
    """The last turn's housekeeping and the next turn's thread record share the records
    connection: concurrent writes take turns instead of one beginning inside another."""
    records = await Records.open(tmp_path / "threads.sqlite")
    try:
        await asyncio.gather(*(records.touch_thread(f"t_{n}", f"{n}", "/w") for n in range(8)))
        assert len(await records.threads()) == 8
    finally:
        await records.close()


async def test_reclaiming_space_never_commits_another_tasks_unfinished_write(
    tmp_path: Path,
) -> None:
    """After a turn, housekeeping frees pages (its statement COMMITs first) while another
    task may be inside a write: that write must stay its own, all or nothing."""
    records = await Records.open(tmp_path / "threads.sqlite")
    try:
        with contextlib.suppress(RuntimeError):
            async with records._writing():
                await records._conn.execute(
                    "INSERT INTO invincat_threads VALUES ('t_half', 'x', '/w', 'a', 'a')"
                )
                reclaim = asyncio.ensure_future(records.reclaim_space())
                await asyncio.wait({reclaim}, timeout=0.5)
                raise RuntimeError("the write fails half-way")
        await asyncio.wait_for(reclaim, timeout=60)
        assert await records.thread("t_half") is None  # rolled back, not committed early
    finally:
        await records.close()
