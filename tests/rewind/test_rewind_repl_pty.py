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
