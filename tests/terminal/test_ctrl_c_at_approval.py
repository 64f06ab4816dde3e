"""Ctrl-C at the terminal's approval prompt, in a real pty: the turn is cancelled, the call
never runs, and the REPL is back at a clean prompt that works."""

from __future__ import annotations

from pathlib import Path

from invincat_server.runtime.agents.history_repair import INTERRUPTED_NOTE
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import LiveInvincat
from tests.terminal.pty_terminal import DEADLINE, Terminal


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
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("write c.txt please")
        term.expect("Approval needed: Write file c.txt")
        term.expect("[y] approve")
        term.expect("> ")
        term.ctrl_c()  # the key, at prompt_toolkit's approval menu
        term.expect("(turn cancelled)")
        term.expect("› ")  # a fresh prompt, not the approval's `> ` still waiting
        term.line("are you still there?")
        term.expect("Yes, still here.")
        term.expect("› ")
        term.ctrl_d()  # Ctrl-D at the prompt leaves normally
        code = term.wait_exit()
    finally:
        term.close()
    transcript = term.screen
    assert code == 0, transcript
    # The interrupted prompt's line is ended; the cancel is said on the next line.
    assert "^C\n(turn cancelled)\n" in transcript, transcript
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
