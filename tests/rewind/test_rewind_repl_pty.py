"""The REPL's /rewind at a real terminal: the turns, a turn picked, its diff, then code
restored — and the file changed by hand asked about by name."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.rewind.scenario import call, make_project, tree
from tests.terminal.pty_terminal import Terminal


def test_rewind_in_the_repl_restores_code_after_asking(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=True)
    before = tree(workspace)
    fake_openai.add_steps(
        [
            call("write_file", path="written.txt", content="brand new\n"),
            call("edit_file", path="src/edited.py", old_string="return 1", new_string="return 2"),
            {"content": "Both changed."},
        ]
    )
    term = Terminal(["chat", "--yes", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("change two files")
        term.expect("Both changed.")
        term.expect("› ")
        (workspace / "src" / "edited.py").write_text("def f():\n    return 3  # mine\n")
        term.line("/rewind")
        term.expect("1. change two files")
        term.expect("Rewind to before which turn (1-1, Enter cancels)? ")
        term.line("1")
        term.expect("+old content")
        term.expect("(Enter cancels)? ")
        term.line("c")
        term.expect("src/edited.py changed since Invincat wrote it; overwrite it? [y/N] ")
        term.line("n")
        term.expect("Kept src/edited.py")
        term.expect("› ")
        assert tree(workspace)["written.txt"] == before["written.txt"]
        assert (workspace / "src" / "edited.py").read_text().endswith("# mine\n")
        term.line("/rewind")
        term.expect("Rewind to before which turn")
        term.line("")
        term.expect("Not rewound.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()


def test_only_a_whole_answer_rewinds_and_type_ahead_answers_nothing(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=False)
    fake_openai.add_steps(
        [call("write_file", path="written.txt", content="brand new\n"), {"content": "Changed."}]
    )
    term = Terminal(["chat", "--yes", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("change a file")
        term.expect("Changed.")
        term.expect("› ")
        changed = tree(workspace)
        # "cancel" starts with "c" (code) and "villain" with "v": neither is an answer.
        for word in ("cancel", "villain", "Bothways"):
            term.line("/rewind")
            term.expect("Rewind to before which turn (1-1, Enter cancels)? ")
            term.line("1")
            term.expect("+old content")
            term.expect("(Enter cancels)? ")
            term.line(word)
            term.expect(f"{word!r} is not understood")
            term.expect("› ")
            assert tree(workspace) == changed
        # Keys typed with the command, before its questions showed, answer none of them.
        term.send("/rewind\r1\rc\r")
        term.expect("(what was typed before this question was dropped")
        term.expect("Rewind to before which turn (1-1, Enter cancels)? ")
        term.line("")
        term.expect("Not rewound.")
        term.expect("› ")
        assert tree(workspace) == changed
        # A whole answer, spaces and case aside, does rewind.
        term.line("/rewind")
        term.expect("Rewind to before which turn (1-1, Enter cancels)? ")
        term.line("1")
        term.expect("(Enter cancels)? ")
        term.line("  CODE ")
        term.expect("Restored 1 file.")
        term.expect("› ")
        assert (workspace / "written.txt").read_bytes() == b"old content\r\nwith CRLF\r\n"
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
