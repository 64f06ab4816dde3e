"""At a narrow terminal the approval menu's long options wrap onto more lines, indented
under their text, instead of being cut at the terminal's width (a real pty)."""

from __future__ import annotations

import re
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.pty_terminal import Terminal, visible

COLS = 50


def test_long_approval_options_wrap_at_a_narrow_terminal(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "w.txt", "content": "W\n"}}
                ]
            },
            {"content": "Done."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env, cols=COLS)
    try:
        term.expect("› ")
        term.line("write w.txt")
        term.expect("[y] approve")
        start = len(term.raw)
        term.expect("> ")
        term.send("n")
        term.expect("Reason for the agent (optional):")
        menu_raw = term.raw[start:]
        term.line("")
        term.expect("Done.")
        term.expect("› ")
        term.ctrl_d()
        term.wait_exit()
    finally:
        term.close()
    # What prompt_toolkit drew, line by line (it turns autowrap off: a longer line is cut).
    lines = [visible(line) for line in menu_raw.split("\r\n")]
    assert all(len(line.rstrip()) < COLS for line in lines), lines
    # Every word of the long option is on screen, in order, across its wrapped lines.
    joined = " ".join(line.strip() for line in lines)
    assert re.search(
        r"\[w\] Allow all file writes and edits \(write_file, edit_file\) in "
        r".*remembered across sessions",
        joined,
    ), lines
