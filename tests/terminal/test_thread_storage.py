"""threads.sqlite stays small (superseded checkpoints are pruned after each turn) and
`invincat threads delete|prune` remove threads, all without losing what a user can open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import LiveInvincat, run_invincat

FILE_LINES = 500  # ~30 KB per file


def _write_files(workspace: Path, count: int) -> None:
    for n in range(1, count + 1):
        line = f"marker-{n} " + "x" * 50 + "\n"
        (workspace / f"f{n}.txt").write_text(line * FILE_LINES)


def _read_turn(n: int) -> list[dict]:
    call = {"name": "read_file", "arguments": {"path": f"f{n}.txt"}}
    return [{"tool_calls": [call]}, {"content": f"Read file {n}."}]


def _checkpoints(db: Path) -> dict[tuple[str, str], int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT thread_id, checkpoint_ns, COUNT(*) FROM checkpoints GROUP BY 1, 2"
        ).fetchall()
    return {(thread, ns): count for thread, ns, count in rows}


def _thread_ids(env: dict[str, str]) -> list[str]:
    import json

    listed = run_invincat(["threads", "list", "--json"], env)
    assert listed.code == 0, listed.stderr
    return [t["thread_id"] for t in json.loads(listed.stdout)]


def test_storage_stays_small_and_the_whole_thread_is_still_sent_on_resume(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    invincat_home: Path,
) -> None:
    turns = 4
    _write_files(workspace, turns)
    for n in range(1, turns + 1):
        fake_openai.add_steps(_read_turn(n))
        args = ["chat", f"read f{n}", "--yes", "--json", "--cwd", str(workspace)]
        result = run_invincat([*args, "--resume"] if n > 1 else args, invincat_env)
        assert result.code == 0, result.stderr
    db = invincat_home / "threads.sqlite"
    [thread] = _thread_ids(invincat_env)
    # One checkpoint left for the thread (without pruning: one per graph step, ~5 a turn).
    assert _checkpoints(db) == {(thread, ""): 1}
    # Four 30 KB files were read: the file holds them about once, not once per step.
    transcript = turns * FILE_LINES * 60
    assert db.stat().st_size <= 3 * transcript

    # --resume after pruning: the model still gets every earlier file in the thread.
    fake_openai.add_steps([{"content": "All four are in context."}])
    result = run_invincat(
        ["chat", "what did you read?", "--resume", "--yes", "--json", "--cwd", str(workspace)],
        invincat_env,
    )
    assert result.code == 0, result.stderr
    sent = str(fake_openai.chat_requests()[-1]["messages"])
    for n in range(1, turns + 1):
        assert f"marker-{n} " in sent


def test_a_pending_approval_survives_kill_9_pruning_and_threads_prune(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    _write_files(workspace, 1)
    fake_openai.add_steps(_read_turn(1))
    first = run_invincat(
        ["chat", "read f1", "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert first.code == 0, first.stderr
    thread = first.of_type("turn_end")[-1]["thread_id"]
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "r.txt", "content": "R"}}
                ]
            },
            {"content": "Wrote it after the restart."},
        ]
    )
    live = LiveInvincat(
        ["chat", "write r", "--thread", thread, "--json", "--cwd", str(workspace)], invincat_env
    )
    asked = live.wait_for("approval_requested")
    live.kill()

    # Every thread is "older than 0 days"; the one waiting for a decision is kept.
    pruned = run_invincat(["threads", "prune", "--older-than", "0", "--yes"], invincat_env)
    assert pruned.code == 0, pruned.stderr
    assert "still waits for a decision" in pruned.stdout and "kept" in pruned.stdout
    assert _thread_ids(invincat_env) == [thread]

    second = run_invincat(
        ["chat", "--thread", thread, "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert second.code == 0, second.stderr
    [resolved] = second.of_type("approval_resolved")
    assert resolved["approval_id"] == asked["approval_id"]
    assert (workspace / "r.txt").read_text() == "R"
    # The first turn's file is still part of the thread the model sees.
    assert "marker-1 " in str(fake_openai.chat_requests()[-1]["messages"])


def test_threads_delete_asks_refuses_unknown_ids_and_removes_everything(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    invincat_home: Path,
) -> None:
    unknown = run_invincat(["threads", "delete", "t_nope"], invincat_env)
    assert unknown.code == 1 and "unknown thread 't_nope'" in unknown.stderr

    _write_files(workspace, 2)
    threads = []
    for n in (1, 2):
        fake_openai.add_steps(_read_turn(n))
        result = run_invincat(
            ["chat", f"read f{n}", "--yes", "--json", "--cwd", str(workspace)], invincat_env
        )
        assert result.code == 0, result.stderr
        threads.append(result.of_type("turn_end")[-1]["thread_id"])
    keep, drop = threads

    declined = run_invincat(["threads", "delete", drop], invincat_env, input="n\n")
    assert declined.code == 0 and "Nothing deleted" in declined.stdout
    no_answer = run_invincat(["threads", "delete", drop], invincat_env, input="")
    assert no_answer.code == 0 and "Nothing deleted" in no_answer.stdout
    assert sorted(_thread_ids(invincat_env)) == sorted(threads)

    deleted = run_invincat(["threads", "delete", drop], invincat_env, input="y\n")
    assert deleted.code == 0, deleted.stderr
    assert _thread_ids(invincat_env) == [keep]
    assert {thread for thread, _ in _checkpoints(invincat_home / "threads.sqlite")} == {keep}
    again = run_invincat(["threads", "delete", drop, "--yes"], invincat_env)
    assert again.code == 1 and "unknown thread" in again.stderr

    bad = run_invincat(["threads", "prune", "--older-than", "-3"], invincat_env)
    assert bad.code == 2 and "0 to 100000" in bad.stderr


def test_threads_delete_of_a_thread_waiting_for_approval_says_so_and_asks(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [{"tool_calls": [{"name": "write_file", "arguments": {"path": "w.txt", "content": "W"}}]}]
    )
    live = LiveInvincat(["chat", "write w", "--json", "--cwd", str(workspace)], invincat_env)
    thread = live.wait_for("approval_requested")["thread_id"]
    live.kill()

    scripted = run_invincat(["threads", "delete", thread, "--yes"], invincat_env)
    assert scripted.code == 1 and "--discard-pending" in scripted.stderr
    asked = run_invincat(["threads", "delete", thread], invincat_env, input="n\n")
    assert "1 approval still waits for a decision (write_file)" in asked.stdout
    assert "discard" in asked.stdout and _thread_ids(invincat_env) == [thread]

    discarded = run_invincat(
        ["threads", "delete", thread, "--yes", "--discard-pending"], invincat_env
    )
    assert discarded.code == 0, discarded.stderr
    assert _thread_ids(invincat_env) == []
    assert not (workspace / "w.txt").exists()
