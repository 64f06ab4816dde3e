"""What `invincat rewind` prints comes from the repository and the model: a file named
with an escape sequence, a prompt with control characters, a diff of a file holding
them — all shown escaped, never sent to the terminal as they are."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.rewind.scenario import call, thread_of
from tests.terminal.cli_process import run_invincat

NAME = "a\x1b[2Jb.txt"
COMMAND = "printf 'x\\033[31mred\\tcol\\n' > \"$(printf 'a\\033[2Jb.txt')\""


def test_rewind_output_holds_no_escape_byte(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "kept.txt").write_text("one\tcolumn\n")
    fake_openai.add_steps(
        [
            call("execute", command=COMMAND + " && printf 'two\\tcolumns\\n' > kept.txt"),
            {"content": "done"},
        ]
    )
    env = {**invincat_env, "INVINCAT_SANDBOX": "off"}
    chat = run_invincat(
        ["chat", "make \x1b]0;pwned\x07 it", "--yes", "--json", "--cwd", str(workspace)], env
    )
    assert chat.code == 0, chat.stderr
    assert (workspace / NAME).exists()
    thread = thread_of(chat)

    listing = run_invincat(["rewind", thread], invincat_env)
    assert listing.code == 0, listing.stderr
    assert "a\\x1b[2Jb.txt" in listing.stdout and "make \\x1b]0;pwned\\x07 it" in listing.stdout
    shown = run_invincat(["rewind", thread, "--to", "1"], invincat_env)  # no terminal: shows
    assert shown.code == 1 and "No terminal to ask" in shown.stderr
    assert "+one\tcolumn" in shown.stdout  # a diff line keeps its tab
    assert "-x\\x1b[31mred\tcol" in shown.stdout
    done = run_invincat(["rewind", thread, "--to", "1", "--yes"], invincat_env)
    assert done.code == 0, done.stderr
    assert not (workspace / NAME).exists()
    for result in (listing, shown, done):
        assert "\x1b" not in result.stdout + result.stderr
        assert "\x07" not in result.stdout + result.stderr
