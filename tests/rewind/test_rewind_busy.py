"""A rewind of a thread whose turn waits for an approval — in another process that is
still running — is refused, code and conversation alike, and changes nothing: that turn
would go on from files and messages the rewind took away."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.rewind.scenario import call, make_project, thread_of, tree
from tests.terminal.cli_process import LiveInvincat, run_invincat


def test_a_thread_with_an_approval_waiting_is_not_rewound(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=False)
    fake_openai.add_steps(
        [call("write_file", path="written.txt", content="turn one\n"), {"content": "one"}]
    )
    first = run_invincat(
        ["chat", "first", "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert first.code == 0, first.stderr
    thread = thread_of(first)
    fake_openai.add_steps(
        [call("write_file", path="third.txt", content="turn two\n"), {"content": "two"}]
    )
    waiting = LiveInvincat(
        ["chat", "second", "--thread", thread, "--json", "--cwd", str(workspace)], invincat_env
    )
    try:
        waiting.wait_for("approval_requested")
        changed = tree(workspace)

        code = run_invincat(["rewind", thread, "--to", "1", "--yes", "--json"], invincat_env)
        assert code.code == 1
        [error] = code.events
        assert error["type"] == "error" and "waiting for a decision" in error["message"]
        both = run_invincat(["rewind", thread, "--to", "1", "--both", "--yes"], invincat_env)
        assert both.code == 1 and "waiting for a decision" in both.stderr
        assert "Nothing changed" in both.stderr
        assert tree(workspace) == changed

        waiting.send("y\n")  # answered: the turn finishes, the thread is quiet again
        waiting.wait_for("turn_end")
        assert waiting.finish() == 0
    finally:
        if waiting.proc.poll() is None:
            waiting.kill()
    assert (workspace / "third.txt").read_text() == "turn two\n"
    listing = run_invincat(["rewind", thread, "--json"], invincat_env)
    assert [t["prompt"] for t in listing.events[0]["turns"]] == ["first", "second"]
    done = run_invincat(["rewind", thread, "--to", "1", "--yes", "--json"], invincat_env)
    assert done.code == 0, done.stderr
    assert done.events[1]["restored"] == ["third.txt", "written.txt"]
