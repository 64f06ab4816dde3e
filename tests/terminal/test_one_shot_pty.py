"""A one-shot `invincat chat PROMPT` at a real terminal (pexpect pty), answered by a person:
by default it runs in the warm chat server's worker (docs/warm-server.md), which reads the
keys from the same terminal. Each case runs warm and cold (INVINCAT_WARM=0) and must end
the same: "n" writes nothing, "y" writes, Ctrl-C at the question cancels and writes
nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.pty_terminal import Terminal

MODES = {"warm": None, "cold": "0"}


def served_by_workers(env: dict[str, str]) -> int:
    """How many commands the session's warm servers have handed to a worker so far."""
    logs = (Path(env["XDG_RUNTIME_DIR"]) / "invincat").glob("chat-*.log")
    return sum(len(re.findall(r"worker \d+ started", log.read_text())) for log in logs)


def one_shot(env: dict[str, str], mode: str, workspace: Path) -> Terminal:
    env = {k: v for k, v in env.items() if k != "INVINCAT_WARM"}
    if MODES[mode] is not None:
        env["INVINCAT_WARM"] = MODES[mode]
    return Terminal(["chat", "write w.txt please", "--cwd", str(workspace)], env)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize(("key", "written"), [("n", False), ("y", True), ("ctrl-c", False)])
def test_the_answer_typed_at_a_one_shot_approval_decides_it(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    mode: str,
    key: str,
    written: bool,
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "w.txt", "content": "W\n"}}
                ]
            },
            {"content": "Done here."},
        ]
    )
    before = served_by_workers(invincat_env)
    term = one_shot(invincat_env, mode, workspace)
    try:
        term.expect("Approval needed: Write file w.txt")
        term.expect("[y] approve")
        term.expect("> ")
        if key == "ctrl-c":
            term.ctrl_c()
            term.expect("(turn cancelled)")
        else:
            term.line(key)
            if key == "n":
                term.expect("Reason for the agent (optional):")
                term.line("")
            term.expect("Done here.")
        code = term.wait_exit()
    finally:
        term.close()
    assert (workspace / "w.txt").exists() is written, term.screen
    assert code == (130 if key == "ctrl-c" else 0), term.screen
    assert served_by_workers(invincat_env) - before == (1 if mode == "warm" else 0)
