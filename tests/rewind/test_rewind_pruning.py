"""The size cap never deletes what a snapshot still counts on: a command's snapshot of
the tree (the blobs the stat cache names) survives another turn's pruning, so the file
that command changes is restored byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import eventually
from tests.rewind.scenario import call, thread_of
from tests.terminal.cli_process import LiveInvincat, run_invincat

TARGET = b"the original\r\nbytes \x00\xff\n"


def test_a_commands_snapshot_survives_pruning_under_a_tiny_cap(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> None:
    (workspace / "target.txt").write_bytes(TARGET)
    (workspace / "big.bin").write_bytes(os.urandom(1536 * 1024))  # over the 1 MB cap alone
    signals = tmp_path / "signals"
    signals.mkdir()
    command = (
        f"touch {signals}/started && while [ ! -e {signals}/go ]; do sleep 0.05; done"
        " && printf 'changed\\n' > target.txt"
    )
    fake_openai.add_steps(
        [
            {"match": {"last_user_contains": "slow", "has_tool_result": False}}
            | call("execute", command=command),
            {"match": {"last_user_contains": "quick", "has_tool_result": False}}
            | call("write_file", path="other.txt", content="other\n"),
            {"match": {"last_user_contains": "quick", "has_tool_result": True}, "content": "B"},
            {"match": {"last_user_contains": "slow", "has_tool_result": True}, "content": "A"},
        ]
    )
    env = {**invincat_env, "INVINCAT_CHECKPOINTS_MAX_MB": "1", "INVINCAT_SANDBOX": "off"}
    slow = LiveInvincat(["chat", "slow", "--yes", "--json", "--cwd", str(workspace)], env)
    try:
        # The command's snapshot is taken (it runs), and it waits: meanwhile another
        # thread's turn ends and prunes the project's checkpoints under the cap.
        assert eventually(lambda: (signals / "started").exists())
        quick = run_invincat(["chat", "quick", "--yes", "--json", "--cwd", str(workspace)], env)
        assert quick.code == 0, quick.stderr
        (signals / "go").touch()
        start = slow.wait_for("turn_start")
        slow.wait_for("turn_end")
        assert slow.finish() == 0, slow.stderr
    finally:
        if slow.proc.poll() is None:
            slow.kill()
    assert (workspace / "target.txt").read_bytes() == b"changed\n"

    result = run_invincat(
        ["rewind", start["thread_id"], "--to", "1", "--yes", "--json"], invincat_env
    )
    assert result.code == 0, result.stdout + result.stderr
    # (other.txt, which the other turn wrote while the command ran, is attributed to the
    # command too: its snapshot after cannot tell who changed what.)
    assert "target.txt" in result.events[1]["restored"]
    assert not result.events[1]["failed"]
    assert (workspace / "target.txt").read_bytes() == TARGET
    assert thread_of(quick) != start["thread_id"]


def test_a_file_unchanged_since_a_pruned_snapshot_is_still_restored(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "target.txt").write_bytes(TARGET)
    (workspace / "big.bin").write_bytes(os.urandom(1536 * 1024))
    env = {**invincat_env, "INVINCAT_CHECKPOINTS_MAX_MB": "1", "INVINCAT_SANDBOX": "off"}
    fake_openai.add_steps([call("execute", command="true"), {"content": "nothing changed"}])
    first = run_invincat(["chat", "look", "--yes", "--json", "--cwd", str(workspace)], env)
    assert first.code == 0, first.stderr
    thread = thread_of(first)  # its snapshot stored the tree; the cap pruned after it
    fake_openai.add_steps(
        [call("execute", command="printf 'changed\\n' > target.txt"), {"content": "changed"}]
    )
    args = ["chat", "change", "--thread", thread, "--yes", "--json", "--cwd", str(workspace)]
    second = run_invincat(args, env)
    assert second.code == 0, second.stderr
    result = run_invincat(["rewind", thread, "--to", "2", "--yes", "--json"], invincat_env)
    assert result.code == 0, result.stdout + result.stderr
    assert result.events[1]["restored"] == ["target.txt"]
    assert (workspace / "target.txt").read_bytes() == TARGET
