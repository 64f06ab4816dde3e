"""A one-shot `invincat chat PROMPT` at a terminal says what it is doing: a live status
line on stderr (spinner, `thinking…` or the running tool, elapsed seconds, retries) while
it waits, erased before an approval question and before the answer, so the screen ends
with the plain output. Warm and cold alike (the warm worker draws on the client's
terminal). Never with `--json`, never when stderr is a pipe.

The final screen is read with pyte (a VT100 screen in memory): the status line draws with
cursor moves and erases, so only an emulator shows whether it really went away."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import INVINCAT, run_invincat
from tests.terminal.pty_terminal import DEADLINE, Terminal
from tests.terminal.pty_terminal import final_screen as pty_final_screen

MODES = {"warm": None, "cold": "0"}
ROWS, COLS = 40, 200
# The running call's words (runtime/tool_phrases.py) are a status only with the seconds.
STATUS_WORDS = ("thinking…", "Ctrl-C cancels", "… · ")


def at_terminal(env: dict[str, str], mode: str, *args: str) -> Terminal:
    env = {k: v for k, v in env.items() if k != "INVINCAT_WARM"}
    if MODES[mode] is not None:
        env["INVINCAT_WARM"] = MODES[mode]
    return Terminal(["chat", *args], env, rows=ROWS, cols=COLS)


def final_screen(raw: str) -> list[str]:
    return pty_final_screen(raw, ROWS, COLS)


def no_status_left(lines: list[str]) -> None:
    leftover = [line for line in lines if any(word in line for word in STATUS_WORDS)]
    assert not leftover, "\n".join(lines)


@pytest.mark.parametrize("mode", list(MODES))
def test_the_status_line_shows_while_it_waits_and_is_gone_before_the_answer(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    mode: str,
) -> None:
    fake_openai.add_steps([{"content": "The answer is 42.", "delay": 3}])
    term = at_terminal(invincat_env, mode, "what is it?", "--cwd", str(workspace))
    try:
        term.expect("thinking…")
        term.expect("The answer is 42.")
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    assert re.search(r"thinking… · [1-9]\d*s", term.screen), term.screen  # seconds count up
    lines = final_screen(term.raw)
    assert lines[-1] == "The answer is 42.", "\n".join(lines)
    no_status_left(lines)


@pytest.mark.parametrize("mode", list(MODES))
def test_the_status_line_names_the_running_tool_and_clears_before_the_approval_question(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    mode: str,
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "w.txt", "content": "W\n"}}
                ],
                "delay": 2,
            },
            {"content": "Done here.", "delay": 2},
        ]
    )
    term = at_terminal(invincat_env, mode, "write w.txt", "--cwd", str(workspace))
    try:
        term.expect("Approval needed: Write file w.txt")
        term.expect("> ")
        at_question = final_screen(term.raw)
        term.line("y")
        term.expect("thinking…")  # back after the approved write, waiting for the model
        term.expect("Done here.")
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    assert (workspace / "w.txt").read_text() == "W\n"
    no_status_left(at_question)
    assert "⚠ Approval needed: Write file w.txt" in at_question, "\n".join(at_question)
    lines = final_screen(term.raw)
    no_status_left(lines)
    assert lines[-1] == "Done here.", "\n".join(lines)
    assert "● Write w.txt" in lines and "  ✓ approve" in lines, "\n".join(lines)


def test_the_status_line_says_what_the_running_call_does_in_the_phrase_books_words(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("n\n")
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"content": "Read it.", "delay": 2},
        ]
    )
    term = at_terminal(invincat_env, "cold", "read notes", "--cwd", str(workspace))
    try:
        term.expect("● Read notes.txt")  # the call's title, then its progressive
        term.expect("Reading notes.txt… · ")
        term.expect("Read it.")
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    lines = final_screen(term.raw)
    assert lines[-1] == "Read it.", "\n".join(lines)
    no_status_left(lines)


def test_no_status_line_with_json_at_a_terminal(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Plain.", "delay": 2}])
    term = at_terminal(invincat_env, "cold", "hi", "--json", "--cwd", str(workspace))
    try:
        term.expect('"type": "turn_end"')
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    assert not any(word in term.raw for word in STATUS_WORDS), term.raw
    assert "\x1b[" not in term.raw  # nothing drawn: only the JSON lines


@pytest.mark.parametrize("mode", list(MODES))
def test_pipes_get_no_status_line(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    mode: str,
) -> None:
    env = {k: v for k, v in invincat_env.items() if k != "INVINCAT_WARM"}
    if MODES[mode] is not None:
        env["INVINCAT_WARM"] = MODES[mode]
    fake_openai.add_steps([{"content": "Piped answer.", "delay": 1}])
    result = run_invincat(["chat", "hi", "--cwd", str(workspace)], env)
    assert result.code == 0, result.stderr
    assert result.stdout == "Piped answer.\n"
    assert result.stderr == ""


def slow_notice(server: FakeOpenAIServer) -> str:
    return (
        f"invincat: the model server at {server.base_url} is slow: no answer within 1s; "
        "Invincat retries (attempt 2 of 3)."
    )


@pytest.mark.parametrize("mode", list(MODES))
def test_a_server_that_does_not_answer_is_named_at_the_first_retry_at_a_terminal(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    mode: str,
) -> None:
    fake_openai.add_steps([{"fault": "hang"}, {"content": "Finally here."}])
    env = {**invincat_env, "INVINCAT_REQUEST_TIMEOUT": "1"}
    term = at_terminal(env, mode, "hi", "--cwd", str(workspace))
    try:
        term.expect("is slow: no answer within 1s")
        term.expect("Finally here.")
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    lines = final_screen(term.raw)
    assert lines[-2:] == [slow_notice(fake_openai), "Finally here."], "\n".join(lines)
    no_status_left(lines)


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_server_that_does_not_answer_is_named_once_on_stderr_in_pipes(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    json_flag: list[str],
) -> None:
    # Two timeouts, then an answer: the first retry says it, the second adds nothing.
    fake_openai.add_steps([{"fault": "hang", "times": 2}, {"content": "Finally here."}])
    env = {**invincat_env, "INVINCAT_REQUEST_TIMEOUT": "1"}
    result = run_invincat(["chat", "hi", *json_flag, "--cwd", str(workspace)], env)
    assert result.code == 0, result.stderr
    assert result.stderr == slow_notice(fake_openai) + "\n"
    if json_flag:
        assert [e["type"] for e in result.events][-1] == "turn_end"  # stdout: events only
    else:
        assert result.stdout == "Finally here.\n"


@pytest.mark.parametrize("mode", list(MODES))
def test_ctrl_c_while_thinking_cancels_and_leaves_no_status_line(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    mode: str,
) -> None:
    fake_openai.add_steps([{"fault": "hang"}])
    term = at_terminal(invincat_env, mode, "hi", "--cwd", str(workspace))
    try:
        term.expect("thinking…")
        term.ctrl_c()
        term.expect("(turn cancelled)")
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 130, term.screen
    lines = final_screen(term.raw)
    assert lines[-1].endswith("(turn cancelled)"), "\n".join(lines)
    no_status_left(lines)


def test_a_dumb_terminal_gets_no_status_line(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Plain.", "delay": 1}])
    child = pexpect.spawn(
        INVINCAT,
        ["chat", "hi", "--cwd", str(workspace)],
        env={**invincat_env, "INVINCAT_WARM": "0", "TERM": "dumb"},
        encoding="utf-8",
        timeout=DEADLINE,
    )
    out = child.read()  # to the end of the output
    child.close()
    assert child.exitstatus == 0, out
    assert "Plain." in out and "thinking" not in out and "\x1b[" not in out, out
