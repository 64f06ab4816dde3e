"""At a real terminal, a cancelled turn's "(turn cancelled)" stands on a line of its own:
not glued to the `^C` the terminal echoed ("^C(turn cancelled)"), nor to streamed text."""

from __future__ import annotations

import re
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import eventually
from tests.terminal.pty_terminal import Terminal, final_screen


def test_ctrl_c_while_the_model_streams_says_turn_cancelled_on_its_own_line(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [{"content": "Streaming slowly " + "word " * 200, "chunk_size": 5, "chunk_delay": 0.2}]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("talk slowly")
        term.expect("Streaming")
        term.expect("Ctrl-C cancels")
        term.ctrl_c()
        term.expect("(turn cancelled)")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    lines = term.screen.split("\n")
    said = [line for line in lines if "(turn cancelled)" in line]
    assert said, term.screen
    # Its own line: nothing before it (spaces aside), in particular not the echoed ^C.
    assert all(re.fullmatch(r"\s*\(turn cancelled\)\s*", line) for line in said), said


def test_ctrl_c_while_a_one_shot_chat_waits_says_turn_cancelled_on_its_own_line(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"fault": "hang"}])
    term = Terminal(["chat", "wait for me", "--cwd", str(workspace)], invincat_env)
    try:
        assert eventually(lambda: bool(fake_openai.requests)), term.screen
        term.ctrl_c()
        term.expect("(turn cancelled)")
        assert term.wait_exit() == 130
    finally:
        term.close()
    # What the user finally sees: the status line erased, then the words on a line of
    # their own, never glued to the ^C the terminal echoed.
    lines = final_screen(term.raw)
    said = [line for line in lines if "(turn cancelled)" in line]
    assert said, "\n".join(lines)
    assert all(re.fullmatch(r"\s*\(turn cancelled\)\s*", line) for line in said), lines
    assert not any("thinking" in line for line in lines), lines
