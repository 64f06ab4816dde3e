"""'Reject always (this session)' in the terminal: `x` rejects the call, later calls the same
rule covers are rejected without asking, `/rules` lists the deny rule and revoking it makes
the call ask again; a call no rule covers is still asked."""

from __future__ import annotations

import re
import time
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.terminal.cli_process import LiveInvincat, run_invincat

DENY_LINE = re.compile(
    r"(r_[0-9a-f]{12})  \[session\]  Reject shell commands starting with `touch` "
    r"for the rest of this session"
)


def _run(command: str) -> dict:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command}}]}


def _stderr_match(repl: LiveInvincat, pattern: re.Pattern[str]) -> re.Match[str]:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        found = pattern.search(repl.stderr)
        if found:
            return found
        time.sleep(0.05)  # polling the reader thread's output, bounded by the deadline
    raise AssertionError(f"no {pattern.pattern!r} in stderr: {repl.stderr}")


def _asked(repl: LiveInvincat) -> list[dict]:
    return [e for e in repl.seen if e["type"] == "approval_requested"]


def test_reject_always_stops_asking_for_the_session_until_revoked(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            _run("touch one.txt"),
            {"content": "rejected"},
            _run("touch two.txt"),
            {"content": "rejected without asking"},
            _run("ls"),
            {"content": "ls was asked"},
            _run("touch three.txt"),
            {"content": "asked again"},
        ]
    )
    repl = LiveInvincat(["chat", "--json", "--cwd", str(workspace)], invincat_env)
    try:
        repl.send("make one\n")
        [asked] = [repl.wait_for("approval_requested")]
        assert asked["deny_option"]["label"] == (
            "Reject, and reject shell commands starting with `touch` for the rest of this session"
        )
        assert asked["deny_option"]["command_prefix"] == "touch"
        repl.send("x\n")
        end = repl.wait_for("turn_end")
        assert [e["decision"] for e in repl.seen if e["type"] == "approval_resolved"] == [
            "reject_always (session)"
        ]

        repl.send("make two\n")
        end = repl.wait_for("turn_end")
        assert len(_asked(repl)) == 1, repl.seen  # not asked
        assert end["status"] == "completed"
        results = [e for e in repl.seen if e["type"] == "tool_result"]
        assert [r["status"] for r in results] == ["rejected", "rejected"]
        tool_messages = [
            m for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"
        ]
        assert "rejected such execute calls for this session" in tool_messages[-1]["content"]

        repl.send("list\n")  # another command: the rule does not cover it
        repl.wait_for("approval_requested")
        assert len(_asked(repl)) == 2
        repl.send("n\n\n")
        repl.wait_for("turn_end")

        repl.send("/rules\n")
        rule_id = _stderr_match(repl, DENY_LINE).group(1)
        repl.send(f"/rules revoke {rule_id}\n")
        _stderr_match(repl, re.compile(f"Revoked {rule_id}: Reject shell commands"))
        repl.send("make three\n")
        repl.wait_for("approval_requested")
        assert len(_asked(repl)) == 3
        repl.send("n\n\n")
        repl.wait_for("turn_end")
        repl.send("/exit\n")
        assert repl.finish() == 0
    finally:
        if repl.proc.poll() is None:
            repl.kill()
    for name in ("one.txt", "two.txt", "three.txt"):
        assert not (workspace / name).exists()


def test_reject_always_answers_the_other_calls_of_its_batch_it_covers(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # Two `rm` calls in one model message: one batch. One answer (`x`) is all the input
    # there is: were the second call asked, input would end at its prompt (exit 1).
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text("keep\n", encoding="utf-8")
    calls = [
        {"name": "execute", "arguments": {"command": f"rm {name}"}} for name in ("a.txt", "b.txt")
    ]
    fake_openai.add_steps([{"tool_calls": calls}, {"content": "nothing removed"}])
    result = run_invincat(
        ["chat", "remove both", "--json", "--cwd", str(workspace)], invincat_env, input="x\n"
    )
    assert result.code == 0, result.stderr
    asked = result.of_type("approval_requested")
    assert len(asked) == 2  # the turn announced both
    assert result.stderr.count("Approval needed: Run shell command: rm") == 1  # one prompt
    assert "rejected: you rejected such calls for this session" in result.stderr
    resolved = {e["approval_id"]: e["decision"] for e in result.of_type("approval_resolved")}
    assert resolved == {
        asked[0]["approval_id"]: "reject_always (session)",
        asked[1]["approval_id"]: "reject",
    }
    assert [r["status"] for r in result.of_type("tool_result")] == ["rejected", "rejected"]
    assert all((workspace / name).read_text() == "keep\n" for name in ("a.txt", "b.txt"))
