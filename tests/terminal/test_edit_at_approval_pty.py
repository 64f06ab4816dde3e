"""At a real terminal, `e` at an approval then new arguments shows the edited call (its
new diff) and asks again; only a yes runs it."""

from __future__ import annotations

import json
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.pty_terminal import Terminal


def test_an_edited_write_shows_its_new_diff_and_asks_again(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.txt", "content": "A\n"}}
                ]
            },
            {"content": "Written."},
        ]
    )
    edited = {"path": "b.txt", "content": "edited by me\n"}
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("write a.txt")
        term.expect("Approval needed: Write file a.txt")
        term.expect("> ")
        term.send("e")
        term.expect("New arguments as JSON")
        term.line(json.dumps(edited))
        term.expect("Approval needed: Edited call: Write b.txt")
        term.expect("+edited by me")
        term.expect("'always' is not offered: the call was edited")
        term.expect("> ")
        # Asked again: nothing ran yet.
        assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
        term.send("y")
        term.expect("Written.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert (workspace / "b.txt").read_text() == "edited by me\n"
    assert not (workspace / "a.txt").exists()
