"""'Always allow' for shell commands covers only what the user saw (issue #23).

Each test drives the real REPL (`invincat chat --json`, answers typed on stdin) against the
scripted model, and performs the attack: a rule the user granted for one harmless command
must not let a destructive one, a chain, a path outside the project or an old broad rule
from `approvals.json` run without asking.
"""

from __future__ import annotations

import json
import queue
import subprocess
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.terminal.cli_process import LiveInvincat
from tests.terminal.pty_terminal import Terminal

ALWAYS_SESSION = "s\n"
REJECT = "n\n\n"  # no, with an empty reason
NOTE = "'always' is not offered"
REFUSED = "; choose one of"  # the prompt's reply to an 's' it does not offer


def _run(command: str) -> dict:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command}}]}


class Repl:
    """One REPL process; `turn` types a prompt whose scripted model runs one command."""

    def __init__(self, server: FakeOpenAIServer, env: dict[str, str], workspace: Path) -> None:
        self.server = server
        self.live = LiveInvincat(["chat", "--json", "--cwd", str(workspace)], env)
        self.early: deque[str | None] = deque()  # lines read while waiting for a prompt

    def _line(self, timeout: float) -> str | None:
        if self.early:
            return self.early.popleft()
        try:
            return self.live.lines.get(timeout=max(0.01, timeout))
        except queue.Empty:
            raise AssertionError(f"no event in time; stderr: {self.live.stderr}") from None

    def turn(self, command: str, answer: str = ALWAYS_SESSION) -> dict[str, Any] | None:
        """Run `command` through the model; the approval request it raised (answered with
        `answer`), or None when it ran without asking."""
        self.server.add_steps([_run(command), {"content": "done"}])
        self.live.send(f"please run {command}\n")
        deadline = time.monotonic() + DEADLINE
        asked = None
        while True:
            line = self._line(deadline - time.monotonic())
            if line is None:
                raise AssertionError(f"the REPL ended; stderr: {self.live.stderr}")
            if not line.strip():
                continue
            event = json.loads(line)
            self.live.seen.append(event)
            if event["type"] == "approval_requested":
                asked = event
                self._answer(answer, deadline)
            if event["type"] == "turn_end":
                return asked

    def _answer(self, answer: str, deadline: float) -> None:
        """Type `answer`. An 's' the prompt refuses (no rule offered) makes it say why and
        ask again: then approve once, as a user told "'always' is not offered" would."""
        errors_before = len(self.live.stderr)
        self.live.send(answer)
        if answer != ALWAYS_SESSION:
            return
        while time.monotonic() < deadline:
            if REFUSED in self.live.stderr[errors_before:]:
                self.live.send("y\n")
                return
            try:  # otherwise the rule was taken and the turn goes on
                line = self.live.lines.get(timeout=0.05)
            except queue.Empty:
                continue
            self.early.append(line)
            if line and json.loads(line)["type"] == "approval_resolved":
                return
        raise AssertionError(f"the 's' answer got no reply; stderr: {self.live.stderr}")

    def close(self) -> None:
        self.live.send("/exit\n")
        assert self.live.finish() == 0, self.live.stderr


@pytest.fixture
def start_repl(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> Iterator[Callable[[], Repl]]:
    started: list[Repl] = []

    def start() -> Repl:
        started.append(Repl(fake_openai, invincat_env, workspace))
        return started[-1]

    yield start
    for session in started:
        session.close()


@pytest.fixture
def victim(workspace: Path) -> Path:
    """A folder beside the project, with a file in it."""
    folder = workspace.parent / "victim"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me\n")
    return folder


def test_always_on_rm_f_does_not_let_rm_rf_outside_the_project_run(
    start_repl: Callable[[], Repl], victim: Path
) -> None:
    repl = start_repl()
    first = repl.turn("rm -f nothing.txt")
    second = repl.turn("rm -rf ../victim", answer=REJECT)
    assert second is not None, "rm -rf ../victim ran without asking"
    assert (victim / "precious.txt").read_text() == "keep me\n"
    # Neither was offered a rule, and the prompt said why when 's' was typed.
    assert first is not None and first["always_options"] == second["always_options"] == []
    assert "`rm`: it deletes files" in first["always_unavailable"]
    assert f"{NOTE}: `rm`: it deletes files; choose one of y, n, e" in repl.live.stderr


def test_always_on_git_status_does_not_cover_git_push(
    start_repl: Callable[[], Repl], workspace: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=DEADLINE)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, timeout=DEADLINE)
    repl = start_repl()
    assert repl.turn("git status") is not None
    assert repl.turn("git status --short") is None  # the rule works
    assert repl.turn(f"git push {remote} HEAD", answer=REJECT) is not None
    # Options first (`git --no-pager log`) used to make the rule just `git`.
    assert repl.turn("git --no-pager log") is not None
    pushed = repl.turn(f"git --no-pager push {remote} HEAD", answer=REJECT)
    assert pushed is not None, "git push ran on a rule for `git --no-pager log`"


def test_a_rule_on_pytest_covers_neither_a_chain_nor_a_path_outside(
    start_repl: Callable[[], Repl], victim: Path
) -> None:
    repl = start_repl()
    assert repl.turn("pytest -q") is not None
    assert repl.turn("pytest -q --co") is None  # the rule works
    assert repl.turn("pytest ; rm -rf ../victim", answer=REJECT) is not None
    outside = repl.turn("pytest ../../outside", answer=REJECT)
    assert outside is not None, "a pytest rule ran pytest on a folder outside the project"
    assert outside["always_options"] == []
    assert "outside the workspace" in outside["always_unavailable"]
    assert (victim / "precious.txt").exists()


def test_an_old_broad_rm_rule_in_approvals_json_does_not_cover_rm_rf(
    start_repl: Callable[[], Repl], victim: Path, workspace: Path, invincat_home: Path
) -> None:
    old = {"tool": "execute", "command_prefix": "rm", "created_at": "2026-01-01T00:00:00+00:00"}
    rules = {"version": 1, "workspaces": {str(workspace.resolve()): [old]}}
    (invincat_home / "approvals.json").write_text(json.dumps(rules), encoding="utf-8")
    repl = start_repl()
    asked = repl.turn("rm -rf ../victim", answer=REJECT)
    assert asked is not None, "an old `rm` rule let rm -rf ../victim run"
    assert (victim / "precious.txt").read_text() == "keep me\n"


def test_the_reported_attack_at_a_real_terminal(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, victim: Path
) -> None:
    """As reported: `s` at the first prompt, then `rm -rf ../victim` must ask."""
    fake_openai.add_steps(
        [
            _run("rm -f nothing.txt"),
            {"content": "Removed nothing."},
            _run("rm -rf ../victim"),
            {"content": "Left it."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("remove nothing.txt")
        term.expect("> ")
        term.line("s")
        term.expect(REFUSED)
        term.send("y")
        term.expect("Removed nothing.")
        term.expect("› ")
        term.line("remove ../victim")
        asked = term.expect("> ")
        term.send("n")
        term.expect("Reason")
        term.line("")
        term.expect("Left it.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert "rm -rf ../victim" in asked and "[y] approve" in asked
    assert f"{NOTE}: `rm`: it deletes files; approve it once or reject it" in asked
    assert "[s]" not in asked
    assert (victim / "precious.txt").read_text() == "keep me\n"
