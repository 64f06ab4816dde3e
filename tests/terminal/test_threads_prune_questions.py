"""`invincat threads prune` asks one question for the whole list: `n` (or end of input)
deletes nothing and asks nothing more, even about threads whose approvals still wait;
only after a yes is each of those asked about on its own."""

from __future__ import annotations

import asyncio
from pathlib import Path

from invincat_server.runtime.records import Records, read_saved
from tests.terminal.cli_process import run_invincat


async def _save(db: Path, workspace: Path) -> None:
    records = await Records.open(db)
    try:
        await records.touch_thread("t_plain", "a plain question", str(workspace))
        for thread in ("t_waiting_a", "t_waiting_b"):
            await records.touch_thread(thread, f"{thread} question", str(workspace))
            await records.add_approval(
                f"ap_{thread}", thread, f"b_{thread}", {"tool_name": "execute"}
            )
    finally:
        await records.close()


def _left(db: Path) -> list[str]:
    return sorted(t.thread_id for t in read_saved(db)[0])


def test_no_to_prune_deletes_nothing_and_asks_nothing_more(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    db = invincat_home / "threads.sqlite"
    asyncio.run(_save(db, workspace))
    # Further answers are there to be (wrongly) read: a yes would delete a waiting thread.
    done = run_invincat(["threads", "prune", "--older-than", "0"], invincat_env, input="n\ny\ny\n")
    assert done.code == 0, done.stderr
    assert done.stdout.count("[y/N]") == 1, done.stdout
    assert "Nothing deleted." in done.stdout
    # The list named every thread, those with waiting approvals with a note.
    for thread in ("t_plain", "t_waiting_a", "t_waiting_b"):
        assert thread in done.stdout
    assert done.stdout.count("1 approval still waits for a decision (execute)") == 2
    assert _left(db) == ["t_plain", "t_waiting_a", "t_waiting_b"]


def test_end_of_input_at_prune_deletes_nothing(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    db = invincat_home / "threads.sqlite"
    asyncio.run(_save(db, workspace))
    done = run_invincat(["threads", "prune", "--older-than", "0"], invincat_env, input="")
    assert done.code == 0, done.stderr
    assert done.stdout.count("[y/N]") == 1, done.stdout
    assert _left(db) == ["t_plain", "t_waiting_a", "t_waiting_b"]


def test_yes_to_prune_then_asks_about_each_waiting_thread(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    db = invincat_home / "threads.sqlite"
    asyncio.run(_save(db, workspace))
    # yes to the list, no to t_waiting_a, yes to t_waiting_b.
    done = run_invincat(["threads", "prune", "--older-than", "0"], invincat_env, input="y\nn\ny\n")
    assert done.code == 0, done.stderr
    assert done.stdout.count("[y/N]") == 3, done.stdout
    assert "t_waiting_a: also delete it and discard its waiting approvals?" in done.stdout
    assert "Deleted 2 threads; kept 1." in done.stdout
    assert _left(db) == ["t_waiting_a"]


def test_prune_deletes_only_the_threads_older_than_the_days_given(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    # The CLI counts days and deletes as a Session does (runtime/thread_pruning.py).
    import sqlite3
    from datetime import UTC, datetime, timedelta

    db = invincat_home / "threads.sqlite"

    async def save() -> None:
        records = await Records.open(db)
        try:
            for thread in ("t_old", "t_recent"):
                await records.touch_thread(thread, f"{thread} question", str(workspace))
        finally:
            await records.close()

    asyncio.run(save())
    ten_days_ago = (datetime.now(UTC) - timedelta(days=10)).isoformat(timespec="seconds")
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE invincat_threads SET updated_at = ? WHERE thread_id = 't_old'", (ten_days_ago,)
        )
    done = run_invincat(["threads", "prune", "--older-than", "5", "--yes"], invincat_env)
    assert done.code == 0, done.stderr
    assert _left(db) == ["t_recent"]
    assert "t_recent" not in done.stdout
