"""Deleting threads: one by id, or those nobody used for a while (`threads prune`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from invincat_server.runtime.errors import SessionError, UnknownThreadError
from invincat_server.runtime.records import ThreadInfo

if TYPE_CHECKING:
    from invincat_server.runtime.turn_runner import TurnRunner


async def prune_threads(
    runner: TurnRunner, older_than_days: float, *, discard_pending: bool, dry_run: bool
) -> tuple[list[ThreadInfo], list[tuple[ThreadInfo, str]]]:
    """Delete threads last used more than `older_than_days` days ago. Returns (deleted,
    kept with why): running threads, and threads with pending approvals unless
    `discard_pending`, are kept. `dry_run` only reports what would go."""
    if not 0 <= older_than_days <= 100_000:  # also refuses NaN and infinity
        raise SessionError("olderThanDays must be a number of days from 0 to 100000.")
    records = runner.stack.records
    cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
    deleted: list[ThreadInfo] = []
    kept: list[tuple[ThreadInfo, str]] = []
    for info in await records.threads_older_than(cutoff):
        if runner.running(info.thread_id) is not None:
            kept.append((info, "a turn is running"))
            continue
        await runner.sync_interrupts(info.thread_id)
        waiting = await records.pending(info.thread_id)
        if waiting and not discard_pending:
            kept.append((info, f"{len(waiting)} approval(s) waiting for a decision"))
            continue
        if not dry_run:
            await records.delete_thread(info.thread_id)
        deleted.append(info)
    if deleted and not dry_run:
        await records.reclaim_space()
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
    await records.delete_thread(thread_id)
    await records.reclaim_space()
