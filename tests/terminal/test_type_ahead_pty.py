"""Keys typed ahead in the REPL, at a real pty: each Enter submits its own prompt (as in a
shell), nothing typed during a turn is echoed into the answer, and no typed-ahead key ever
answers an approval question (docs/security.md, "The terminal")."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.pty_terminal import Terminal

SLOW = {"chunk_size": 4, "chunk_delay": 0.1}  # a turn that is still running when keys come


def _user_prompts(fake_openai: FakeOpenAIServer) -> list[str]:
    return [r["messages"][-1]["content"] for r in fake_openai.chat_requests()]


@pytest.mark.parametrize("warm", ["1", "0"], ids=["warm", "cold"])
def test_a_line_typed_before_the_prompt_shows_is_sent_as_its_own_prompt(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, warm: str
) -> None:
    fake_openai.add_steps([{"content": "Hello back."}])
    term = Terminal(["chat", "--cwd", str(workspace)], {**invincat_env, "INVINCAT_WARM": warm})
    try:
        term.line("hello")  # at once: the process is still starting
        term.expect("Hello back.")
        term.expect("› ")
        term.ctrl_d()  # leaves only at an empty prompt: nothing of `hello` was left in it
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    assert _user_prompts(fake_openai) == ["hello"]


def test_two_lines_typed_during_a_turn_are_two_turns_in_order_and_not_echoed(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"content": "Streaming " + "word " * 40 + "END-OF-FIRST", **SLOW},
            {"match": {"last_user_contains": "run ls"}, "content": "Listed."},
            {"match": {"last_user_contains": "run pwd"}, "content": "Printed."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("talk slowly")
        term.expect("Streaming")
        term.send("run ls\rrun pwd\r")  # typed while the answer streams
        during = term.expect("END-OF-FIRST")
        term.expect("Listed.")
        term.expect("Printed.")
        term.expect("› ")
        term.ctrl_d()
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    assert "run ls" not in during and "run pwd" not in during, during  # no echo mid-answer
    # Two turns, not one prompt "run ls\nrun pwd" (once one two-line shell command).
    assert _user_prompts(fake_openai) == ["talk slowly", "run ls", "run pwd"]


def test_keys_typed_ahead_never_answer_an_approval(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "content": "Let me " + "think " * 20,
                **SLOW,
                "tool_calls": [{"name": "execute", "arguments": {"command": "touch made.txt"}}],
            },
            {"content": "Not run, then."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.line("make the file")  # before the prompt shows ...
        term.send("y")  # ... and a `y` after it: the one-keystroke "approve"
        term.expect("Let me")
        term.send("y\r")  # and again while the turn streams, before the question
        term.expect("[y] approve")
        term.expect("> ")
        term.send("n")  # still waiting for a real answer: this one decides
        term.expect("Reason for the agent (optional):")
        term.send("\r")
        term.expect("Not run, then.")
        term.expect("› ")
        term.ctrl_d()
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    assert not (workspace / "made.txt").exists()
    assert "(what was typed before this question was dropped" in term.screen
    assert _user_prompts(fake_openai)[0] == "make the file"
