"""The REPL served by a warm server's worker at a real terminal (docs/warm-server.md): the
worker's line editor works on the client's terminal, and the shell gets its terminal back
as it handed it over, however the worker ended."""

from __future__ import annotations

import os
import re
import shlex
import signal
from pathlib import Path

import pexpect
import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import warm_workers
from tests.deadlines import eventually
from tests.terminal.cli_process import INVINCAT
from tests.terminal.pty_terminal import DEADLINE, Terminal


def _user_prompts(fake_openai: FakeOpenAIServer) -> list[str]:
    return [r["messages"][-1]["content"] for r in fake_openai.chat_requests()]


def test_the_repl_runs_in_a_warm_worker_on_the_clients_terminal(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Warm answer."}])
    runtime = Path(invincat_env["XDG_RUNTIME_DIR"])
    before = set(warm_workers(runtime))
    term = Terminal(["chat", "--cwd", str(workspace)], {**invincat_env, "INVINCAT_WARM": "1"})
    try:
        term.expect("› ")
        term.child.setwinsize(30, 120)  # SIGWINCH reaches only the client; it is relayed
        term.line("hi")
        term.expect("Warm answer.")
        term.expect("› ")
        term.ctrl_d()
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    assert set(warm_workers(runtime)) - before, "no warm worker served the REPL"
    assert _user_prompts(fake_openai) == ["hi"]


def test_a_worker_killed_mid_turn_leaves_the_shells_terminal_echoing(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """While a turn runs the worker turns echo off (type-ahead is not echoed); a worker
    that dies then cannot set it back, so the client does."""
    fake_openai.add_steps([{"content": "Streaming " + "word " * 400, "chunk_delay": 0.2}])
    runtime = Path(invincat_env["XDG_RUNTIME_DIR"])
    before = set(warm_workers(runtime))
    shell = pexpect.spawn(
        "bash",
        ["--norc", "--noprofile", "-i"],
        env={**invincat_env, "PS1": "$ ", "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm-256color"},
        encoding="utf-8",
        timeout=DEADLINE,
        dimensions=(40, 200),
    )
    try:
        shell.expect_exact("$ ")
        shell.sendline(shlex.join([INVINCAT, "chat", "--cwd", str(workspace)]))
        shell.expect_exact("›")
        shell.send("talk slowly\r")
        shell.expect_exact("Streaming")
        assert eventually(lambda: set(warm_workers(runtime)) - before), "no warm worker"
        [worker] = set(warm_workers(runtime)) - before
        os.kill(worker, signal.SIGKILL)
        shell.expect_exact("ended without an exit status")
        shell.expect_exact("$ ")
        shell.sendline("stty -a; echo END-OF-STTY")
        shell.expect_exact("END-OF-STTY")  # the echo of the command line: echo works
        shell.expect_exact("END-OF-STTY")
        modes = shell.before
    finally:
        shell.close(force=True)
    assert re.search(r"(?<![-\w])echo\b", modes) and re.search(r"(?<![-\w])icrnl\b", modes), modes


@pytest.mark.parametrize("warm", ["1", "0"], ids=["warm", "cold"])
def test_ctrl_z_mid_turn_gives_the_shell_an_echoing_terminal_and_fg_resumes(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, warm: str
) -> None:
    """dash, which (unlike bash) does not reset the terminal for a stopped job itself."""
    fake_openai.add_steps([{"content": "Streaming " + "word " * 400, "chunk_delay": 0.2}])
    shell = pexpect.spawn(
        "dash",
        ["-i"],
        env={
            **invincat_env,
            "INVINCAT_WARM": warm,
            "PS1": "$ ",
            "PROMPT_TOOLKIT_NO_CPR": "1",
            "TERM": "xterm-256color",
        },
        encoding="utf-8",
        timeout=DEADLINE,
        dimensions=(40, 200),
    )
    try:
        shell.expect_exact("$ ")
        shell.sendline(shlex.join([INVINCAT, "chat", "--cwd", str(workspace)]))
        shell.expect_exact("›")
        shell.send("talk slowly\r")
        shell.expect_exact("Streaming")
        shell.send("\x1a")  # Ctrl-Z
        shell.expect("Stopped")
        shell.sendline("stty -a; echo END-OF-STTY")
        shell.expect_exact("END-OF-STTY")  # the echo of the command line: echo works
        shell.expect_exact("END-OF-STTY")
        modes = shell.before
        shell.sendline("fg")
        shell.expect_exact("word")  # streaming again
        shell.sendintr()  # Ctrl-C cancels the turn
        shell.expect_exact("(turn cancelled)")
        shell.expect_exact("›")
        shell.sendeof()
        shell.expect_exact("$ ")
    finally:
        shell.close(force=True)
    assert re.search(r"(?<![-\w])echo\b", modes) and re.search(r"(?<![-\w])icrnl\b", modes), modes
