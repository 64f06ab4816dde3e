"""Pending approvals survive a dead process; cancelled turns leave a usable thread."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.agents.history_repair import INTERRUPTED_NOTE
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE, eventually
from tests.terminal.cli_process import LiveInvincat, process_running, run_invincat


def test_pending_approval_survives_a_killed_process_and_is_resolved_by_a_new_one(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "r.txt", "content": "R\n"}}
                ]
            },
            {"content": "Finished after the restart."},
        ]
    )
    first = LiveInvincat(["chat", "write r", "--json", "--cwd", str(workspace)], invincat_env)
    asked = first.wait_for("approval_requested")
    first.kill()  # no chance to clean up: like a crash or a closed laptop
    assert not (workspace / "r.txt").exists()

    second = run_invincat(
        ["chat", "--thread", asked["thread_id"], "--json", "--cwd", str(workspace)],
        invincat_env,
        input="y\n",
    )
    assert second.code == 0, second.stderr
    assert (workspace / "r.txt").read_text() == "R\n"
    [resolved] = second.of_type("approval_resolved")
    assert resolved["approval_id"] == asked["approval_id"]
    end = second.of_type("turn_end")[-1]
    assert end["status"] == "completed" and end["thread_id"] == asked["thread_id"]
    assert "Finished after the restart." in "".join(
        e["text"] for e in second.of_type("message_delta")
    )


@pytest.mark.parametrize("how", ["--resume", "--thread"])
def test_json_resume_announces_the_pending_approval_on_stdout_before_reading_the_decision(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, how: str
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "j.txt", "content": "J\n"}}
                ]
            },
            {"content": "Written after the resume."},
        ]
    )
    first = LiveInvincat(["chat", "write j", "--json", "--cwd", str(workspace)], invincat_env)
    asked = first.wait_for("approval_requested")
    first.kill()

    target = ["--resume"] if how == "--resume" else ["--thread", asked["thread_id"]]
    # A script that answers only what it was asked on stdout, as a --json client must.
    second = LiveInvincat(["chat", *target, "--json", "--cwd", str(workspace)], invincat_env)
    again = second.wait_for("approval_requested")
    assert again["approval_id"] == asked["approval_id"] and again["diff"] == asked["diff"]
    assert [e["type"] for e in second.seen] == ["turn_start", "approval_requested"]
    assert not (workspace / "j.txt").exists()
    second.send("y\n")
    end = second.wait_for("turn_end")
    assert end["status"] == "completed" and end["thread_id"] == asked["thread_id"]
    assert second.finish() == 0, second.stderr
    kinds = [e["type"] for e in second.seen]
    assert kinds[:3] == ["turn_start", "approval_requested", "approval_resolved"], kinds
    [resolved] = [e for e in second.seen if e["type"] == "approval_resolved"]
    assert resolved["approval_id"] == asked["approval_id"] and resolved["decision"] == "approve"
    assert (workspace / "j.txt").read_text() == "J\n"
    deltas = "".join(e["text"] for e in second.seen if e["type"] == "message_delta")
    assert deltas == "Written after the resume."


def test_input_ending_at_an_approval_leaves_it_pending(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "p.txt", "content": "P"}}
                ]
            },
            {"content": "done"},
        ]
    )
    first = run_invincat(["chat", "write p", "--json", "--cwd", str(workspace)], invincat_env)
    assert first.code == 1
    assert "still pending" in first.stderr and "--thread" in first.stderr
    thread_id = first.of_type("approval_requested")[0]["thread_id"]
    second = run_invincat(
        ["chat", "--thread", thread_id, "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert second.code == 0, second.stderr
    assert (workspace / "p.txt").read_text() == "P"


def test_ctrl_c_mid_tool_cancels_the_turn_and_the_next_turn_works(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # Outlasts the wait for its death by far: a leaked command cannot pass by ending.
    marker = f"sleep {DEADLINE * 4:.0f}.25"
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": marker}}]},
            {"content": "Still here after the cancel."},
        ]
    )
    repl = LiveInvincat(["chat", "--yes", "--json", "--cwd", str(workspace)], invincat_env)
    repl.send("run the long command\n")
    repl.wait_for("tool_call", name="execute")
    assert eventually(lambda: process_running(marker)), "the command never started"
    repl.interrupt()
    cancelled = repl.wait_for("turn_end")
    assert cancelled["status"] == "cancelled"
    assert eventually(lambda: not process_running(marker)), (
        "the shell command outlived the cancelled turn"
    )

    repl.send("are you still there?\n")
    completed = repl.wait_for("turn_end")
    assert completed["status"] == "completed" and completed["thread_id"] == cancelled["thread_id"]
    assert repl.finish() == 0
    messages = fake_openai.chat_requests()[-1]["messages"]
    tool_messages = [m for m in messages if m["role"] == "tool"]
    assert tool_messages and tool_messages[0]["content"] == INTERRUPTED_NOTE
    assert messages[-1] == {"role": "user", "content": "are you still there?"}


def test_json_resume_of_a_subagents_pending_write_asks_it_again_and_finishes(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    main, worker = "You are Invincat, a careful", "You are Invincat's worker subagent"
    task = {"description": "write s.txt", "subagent_type": "worker"}
    fake_openai.add_steps(
        [
            {
                "match": {"system_contains": main, "has_tool_result": False},
                "tool_calls": [{"name": "task", "arguments": task}],
            },
            {
                "match": {"system_contains": worker, "has_tool_result": False},
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "s.txt", "content": "S\n"}}
                ],
            },
            {"match": {"system_contains": worker}, "content": "wrote s.txt"},
            {"match": {"system_contains": main}, "content": "The worker is done."},
        ]
    )
    first = LiveInvincat(["chat", "delegate", "--json", "--cwd", str(workspace)], invincat_env)
    first.wait_for("approval_requested", tool_name="task")
    first.send("y\n")
    asked = first.wait_for("approval_requested", tool_name="write_file")
    first.kill()  # dies with the subagent's write pending

    second = LiveInvincat(["chat", "--resume", "--json", "--cwd", str(workspace)], invincat_env)
    again = second.wait_for("approval_requested")
    assert again["approval_id"] == asked["approval_id"] and again["tool_name"] == "write_file"
    assert [e["type"] for e in second.seen] == ["turn_start", "approval_requested"]
    second.send("y\n")
    end = second.wait_for("turn_end")
    assert end["status"] == "completed", second.seen
    assert second.finish() == 0, second.stderr
    assert (workspace / "s.txt").read_text() == "S\n"
    task_result = next(e for e in second.seen if e["type"] == "tool_result" and e["name"] == "task")
    assert task_result["content"] == "wrote s.txt"


def test_input_ending_at_a_resumed_approval_leaves_it_pending_again(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "e.txt", "content": "E"}}
                ]
            },
            {"content": "done"},
        ]
    )
    first = LiveInvincat(["chat", "write e", "--json", "--cwd", str(workspace)], invincat_env)
    asked = first.wait_for("approval_requested")
    first.kill()

    args = ["chat", "--thread", asked["thread_id"], "--json", "--cwd", str(workspace)]
    second = run_invincat(args, invincat_env, input="")
    assert second.code == 1 and "still pending" in second.stderr
    assert [e["type"] for e in second.events] == ["turn_start", "approval_requested"]
    assert not (workspace / "e.txt").exists()

    third = run_invincat([*args, "--yes"], invincat_env)
    assert third.code == 0, third.stderr
    assert (workspace / "e.txt").read_text() == "E"
