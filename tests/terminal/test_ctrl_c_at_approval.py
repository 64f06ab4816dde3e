"""Ctrl-C at the terminal's approval prompt, in a real pty: the turn is cancelled, the call
never runs, and the REPL is back at a clean prompt that works."""

from __future__ import annotations

import io
from pathlib import Path

import pexpect

from invincat_server.runtime.agents.history_repair import INTERRUPTED_NOTE
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import INVINCAT, LiveInvincat

DEADLINE = 90  # generous: the machine is shared; every wait ends on the awaited text


def test_ctrl_c_at_the_approval_prompt_cancels_the_turn_and_returns_to_a_clean_prompt(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "c.txt", "content": "C\n"}}
                ]
            },
            {"match": {"last_user_contains": "still there"}, "content": "Yes, still here."},
        ]
    )
    child = pexpect.spawn(
        INVINCAT,
        ["chat", "--cwd", str(workspace)],
        env=invincat_env,
        encoding="utf-8",
        timeout=DEADLINE,
        dimensions=(40, 200),
    )
    screen = io.StringIO()
    child.logfile_read = screen  # everything the terminal showed
    try:
        child.expect_exact("› ")
        child.sendline("write c.txt please")
        child.expect_exact("Approval needed: Write file c.txt")
        child.expect_exact("[y] approve")
        child.expect_exact("> ")
        child.sendintr()  # Ctrl-C, through the terminal's line discipline
        child.expect_exact("(turn cancelled)")
        child.expect_exact("› ")  # a fresh prompt, not the approval's `> ` still waiting
        child.sendline("are you still there?")
        child.expect_exact("Yes, still here.")
        child.expect_exact("› ")
        child.sendeof()  # Ctrl-D at the prompt leaves normally
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    transcript = screen.getvalue()
    assert child.exitstatus == 0, transcript
    # The interrupted prompt's line is ended; the cancel is said on the next line.
    assert "> ^C\r\n(turn cancelled)\r\n" in transcript, transcript
    assert not (workspace / "c.txt").exists()  # a cancel never approves
    assert "already cancelled" not in transcript and "still pending" not in transcript
    # The model is told the cancelled call did not run, and is asked the new question.
    messages = fake_openai.chat_requests()[-1]["messages"]
    assert messages[-1] == {"role": "user", "content": "are you still there?"}
    [tool_message] = [m for m in messages if m["role"] == "tool"]
    assert tool_message["content"] == INTERRUPTED_NOTE


def test_ctrl_c_at_an_approval_in_json_mode_cancels_and_the_next_prompt_runs(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": "touch ran.txt"}}]},
            {"match": {"last_user_contains": "next"}, "content": "Next answer."},
        ]
    )
    repl = LiveInvincat(["chat", "--json", "--cwd", str(workspace)], invincat_env)
    repl.send("run it\n")
    asked = repl.wait_for("approval_requested", timeout=DEADLINE)
    repl.interrupt()
    cancelled = repl.wait_for("turn_end", timeout=DEADLINE)
    assert cancelled["status"] == "cancelled"
    repl.send("next question\n")  # goes to the REPL, not to the dropped approval prompt
    completed = repl.wait_for("turn_end", timeout=DEADLINE)
    assert completed["status"] == "completed"
    assert repl.finish(timeout=DEADLINE) == 0, repl.stderr
    assert not (workspace / "ran.txt").exists()
    kinds = [e["type"] for e in repl.seen]
    assert "approval_resolved" not in kinds
    assert "already cancelled" not in repl.stderr and "still pending" not in repl.stderr
    assert asked["thread_id"] == completed["thread_id"]
