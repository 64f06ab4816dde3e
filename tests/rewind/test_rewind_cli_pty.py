"""`invincat rewind --to N` at a real terminal: the diff, `Rewind? [y/N]`, then a question
naming each file changed by hand; a "no" there keeps that file only."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.rewind.scenario import make_project, run_changing_turn, thread_of, tree
from tests.terminal.pty_terminal import Terminal


def test_rewind_asks_at_a_terminal_and_names_the_hand_edited_file(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=True)
    before = tree(workspace)
    thread = thread_of(run_changing_turn(fake_openai, invincat_env, workspace))
    (workspace / "fourth.txt").write_text("mine now\n")
    term = Terminal(["rewind", thread, "--to", "1"], invincat_env)
    try:
        term.expect("-brand new")
        term.expect("Rewind? [y/N] ")
        term.line("y")
        term.expect("fourth.txt changed since Invincat wrote it; overwrite it? [y/N] ")
        term.line("n")
        term.expect("Kept fourth.txt")
        assert term.wait_exit() == 0
    finally:
        term.close()
    after = tree(workspace)
    assert after.pop("fourth.txt")[0] == b"mine now\n"
    assert after == before
