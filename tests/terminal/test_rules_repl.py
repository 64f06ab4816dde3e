"""`/rules` and `/rules revoke ID` in the REPL: this session's rules and this workspace's,
with ids; a revoked session rule no longer covers the next call."""

from __future__ import annotations

import re
import time
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.terminal.cli_process import LiveInvincat
from tests.terminal.test_rules_cli import grant_workspace_rule

SESSION_LINE = re.compile(r"(r_[0-9a-f]{12})  \[session\]  Allow shell commands starting with")


def _stderr_match(repl: LiveInvincat, pattern: re.Pattern[str]) -> re.Match[str]:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        found = pattern.search(repl.stderr)
        if found:
            return found
        time.sleep(0.05)  # polling the reader thread's output, bounded by the deadline
    raise AssertionError(f"no {pattern.pattern!r} in stderr: {repl.stderr}")


def test_rules_lists_both_scopes_and_revoke_makes_the_call_ask_again(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    workspace_label = grant_workspace_rule(fake_openai, invincat_env, workspace)
    # The workspace rule covers `pytest`; the session rule granted below covers `git status`.
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": "git status"}}]},
            {"content": "ran"},
            {"tool_calls": [{"name": "execute", "arguments": {"command": "git status -s"}}]},
            {"content": "ran without asking"},
            {"tool_calls": [{"name": "execute", "arguments": {"command": "git status"}}]},
            {"content": "asked again"},
        ]
    )
    repl = LiveInvincat(["chat", "--json", "--cwd", str(workspace)], invincat_env)
    try:
        repl.send("check the repo\n")
        repl.wait_for("approval_requested")
        repl.send("s\n")
        repl.wait_for("turn_end")
        repl.send("again\n")
        end = repl.wait_for("turn_end")
        assert not [e for e in repl.seen if e["type"] == "approval_requested"][1:], repl.seen
        assert end["status"] == "completed"

        repl.send("/rules\n")
        rule_id = _stderr_match(repl, SESSION_LINE).group(1)
        _stderr_match(
            repl, re.compile(r"r_[0-9a-f]{12}  \[workspace\]  " + re.escape(workspace_label))
        )
        repl.send("/rules revoke r_000000000000\n")
        _stderr_match(repl, re.compile("No approval rule with id 'r_000000000000'"))
        repl.send("/rules bogus\n")
        _stderr_match(repl, re.compile(r"Usage: /rules"))
        repl.send(f"/rules revoke {rule_id}\n")
        _stderr_match(repl, re.compile(f"Revoked {rule_id}: Allow shell commands starting with"))

        repl.send("third time\n")
        asked = repl.wait_for("approval_requested")
        assert asked["tool_name"] == "execute"
        repl.send("n\n\n")
        repl.wait_for("turn_end")
        repl.send("/help\n")
        _stderr_match(repl, re.compile(r"/rules revoke ID"))
        repl.send("/exit\n")
        assert repl.finish() == 0
    finally:
        if repl.proc.poll() is None:
            repl.kill()


def test_tab_completes_rules(tmp_path: Path) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from invincat_server.terminal.app import SLASH_COMMANDS
    from invincat_server.terminal.line_editor import ChatCompleter

    completer = ChatCompleter(SLASH_COMMANDS, tmp_path)
    found = completer.get_completions(Document("/ru"), CompleteEvent(completion_requested=True))
    assert [c.text for c in found] == ["/rules"]
