"""Deleting threads: one by id, or those nobody used for a while (`threads prune`).

The one owner of what "older than N days" means and of how threads are deleted (each,
then the freed pages given back once): a Session's `delete_thread` / `prune_threads`
(below, which also keep running threads) and the CLI's, which runs no turn
(runtime/project/saved_threads.py), both go through `older_than` and `delete_threads`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from invincat_server.runtime.errors import SessionError, UnknownThreadError

if TYPE_CHECKING:
    from invincat_server.runtime.records import ThreadInfo
    from invincat_server.runtime.thread_store import ThreadRecords
    from invincat_server.runtime.turn_runner import TurnRunner

MAX_DAYS = 100_000


async def older_than(records: ThreadRecords, days: float) -> list[ThreadInfo]:
    """Threads last used more than `days` days ago, oldest first."""
    if not 0 <= days <= MAX_DAYS:  # also refuses NaN and infinity
        raise SessionError(f"olderThanDays must be a number of days from 0 to {MAX_DAYS}.")
    return await records.threads_older_than(datetime.now(UTC) - timedelta(days=days))


async def delete_threads(records: ThreadRecords, thread_ids: list[str]) -> None:
    """Delete each thread and everything stored for it (conversation, approvals, memory
    cursor, rewind checkpoints: Records.delete_thread), then give the freed pages back
    once."""
    if not thread_ids:
        return
    for thread_id in thread_ids:
        await records.delete_thread(thread_id)
    await records.reclaim_space()


async def prune_threads(
    runner: TurnRunner, older_than_days: float, *, discard_pending: bool, dry_run: bool
) -> tuple[list[ThreadInfo], list[tuple[ThreadInfo, str]]]:
    """Delete threads last used more than `older_than_days` days ago. Returns (deleted,
    kept with why): running threads, and threads with pending approvals unless
    `discard_pending`, are kept. `dry_run` only reports what would go."""
    records = runner.stack.records
    deleted: list[ThreadInfo] = []
    kept: list[tuple[ThreadInfo, str]] = []
    for info in await older_than(records, older_than_days):
        if runner.running(info.thread_id) is not None:
            kept.append((info, "a turn is running"))
            continue
        await runner.sync_interrupts(info.thread_id)
        waiting = await records.pending(info.thread_id)
        if waiting and not discard_pending:
            kept.append((info, f"{len(waiting)} approval(s) waiting for a decision"))
            continue
        if not dry_run:
            # At once, right after the checks: no turn can start on it in between (as
            # delete_threads would, had it waited for the others' checks).
            await records.delete_thread(info.thread_id)
        deleted.append(info)
    if deleted and not dry_run:
        await records.reclaim_space()  # once, as delete_threads does
    return deleted, kept


async def delete_thread(runner: TurnRunner, thread_id: str, *, discard_pending: bool) -> None:
    """Delete a saved thread and everything stored for it. A running thread is refused;
    so is one with approvals waiting for a decision, unless `discard_pending`."""
    records = runner.stack.records
    if await records.thread(thread_id) is None:
        raise UnknownThreadError(
            f"Unknown thread {thread_id!r}; list threads with `invincat threads list`."
        )
    runner.ensure_idle(thread_id)
    await runner.sync_interrupts(thread_id)
    waiting = await records.pending(thread_id)
    if waiting and not discard_pending:
        raise SessionError(
            f"Thread {thread_id} has {len(waiting)} approval(s) waiting for a decision; "
            "deleting it discards them. Ask the user, then repeat with discardPending."
        )
    await delete_threads(records, [thread_id])
