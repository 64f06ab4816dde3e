"""A model that repeats itself, through the real `invincat chat` and the fake server: the
third identical call does not run and nobody is asked, a model that goes on is stopped
with an error naming the call, and `max_repeated_calls = 0` turns the guard off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

WRITE = {"name": "write_file", "arguments": {"path": "notes.txt", "content": "hello\n"}}


def hermes(name: str, **args: Any) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>"


def test_the_third_identical_write_is_not_run_nor_asked_and_the_model_then_answers(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"tool_calls": [WRITE], "times": 3},
            {"content": "I wrote notes.txt.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "write notes", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    # Asked and written once; the second changes nothing (refused unasked, tools.md), and
    # the third was answered by the guard, without asking.
    assert len(result.of_type("approval_requested")) == 1
    first, second, third = result.of_type("tool_result")
    assert [first["status"], second["status"], third["status"]] == ["success", "error", "error"]
    assert "notes.txt already holds exactly this content" in second["content"]
    assert "already made this exact call 2 times this turn" in third["content"]
    assert "already holds exactly this content" in third["content"]  # what it last returned
    assert (workspace / "notes.txt").read_text() == "hello\n"
    # The model saw the note, then answered, and the turn completed.
    said = [m for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert "The file already has that change" in said[-1]["content"]
    assert "".join(e["text"] for e in result.of_type("message_delta")) == "I wrote notes.txt."
    [end] = result.of_type("turn_end")
    assert end["status"] == "completed"


def test_a_model_that_keeps_repeating_a_text_call_is_stopped_with_a_notice(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    fake_openai.add_steps([{"content": hermes("read_file", path="calc.py"), "times": 20}])
    result = run_invincat(["chat", "explain calc.py", "--cwd", str(workspace)], invincat_env)
    assert result.code == 1
    assert "Stopped the turn" in result.stderr and "`read_file`" in result.stderr
    assert "calc.py" in result.stderr and "5 times this turn" in result.stderr
    # Two reads ran, two were answered by the guard, the fifth ended the turn: 5 model
    # calls instead of the recursion limit's hundred.
    assert len(fake_openai.chat_requests()) == 5
    assert "Traceback" not in result.stderr


def test_a_repeated_read_is_told_to_use_what_it_read(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    read = {"name": "read_file", "arguments": {"path": "calc.py"}}
    fake_openai.add_steps(
        [
            {"tool_calls": [read], "times": 3},
            {"content": "add subtracts.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(["chat", "explain", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    third = result.of_type("tool_result")[-1]
    assert third["status"] == "error"
    assert "You already have its result above: use it" in third["content"]
    assert "return a - b" in third["content"]  # what the read returned, once more


def test_max_repeated_calls_0_lets_a_model_repeat(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "calc.py").write_text("x = 1\n")
    read = {"name": "read_file", "arguments": {"path": "calc.py"}}
    fake_openai.add_steps([{"tool_calls": [read], "times": 6}, {"content": "It sets x."}])
    env = {**invincat_env, "INVINCAT_MAX_REPEATED_CALLS": "0"}
    result = run_invincat(["chat", "explain", "--json", "--cwd", str(workspace)], env)
    assert result.code == 0, result.stderr
    assert [r["status"] for r in result.of_type("tool_result")] == ["success"] * 6
    [end] = result.of_type("turn_end")
    assert end["status"] == "completed"


def test_a_finished_todo_list_sent_again_ends_the_turn_completed(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """Bench run 9: the model fixed calc.py, then sent its all-completed list again and
    again; the turn ended failed although the work was done."""
    done = [{"content": "Fix add in calc.py", "status": "completed"}]
    fake_openai.add_steps([{"content": hermes("write_todos", todos=done), "times": 2}])
    result = run_invincat(["chat", "fix calc.py", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    [end] = result.of_type("turn_end")
    assert end["status"] == "completed"
    assert len(fake_openai.chat_requests()) == 2  # the second list ended it
    assert not any("Stopped the turn" in e["message"] for e in result.of_type("error"))

    # A list with an item still open is a loop like any other: the guard stops it.
    open_items = [*done, {"content": "Run the test", "status": "pending"}]
    fake_openai.add_steps([{"content": hermes("write_todos", todos=open_items), "times": 20}])
    looped = run_invincat(["chat", "go on", "--json", "--cwd", str(workspace)], invincat_env)
    assert looped.code == 1
    assert any("Stopped the turn" in e["message"] for e in looped.of_type("error"))


def test_copies_of_a_call_in_one_answer_run_once_and_the_turn_goes_on(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """Bench run 19: one answer of 32 calls, three over and over, and the turn was stopped
    as if the model had been told five times."""
    (workspace / "cli.py").write_text("import argparse\n")
    read = hermes("read_file", path="cli.py")
    write = hermes("write_file", path="notes.txt", content="hello\n")
    fake_openai.add_steps(
        [
            {"content": "\n".join([read, write] * 8)},
            {"content": "I wrote notes.txt.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "write notes", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    # One write asked about and made; the copies neither ran nor asked.
    [asked] = result.of_type("approval_requested")
    results = result.of_type("tool_result")
    ran = [r for r in results if r["status"] == "success"]
    assert sorted(r["name"] for r in ran) == ["read_file", "write_file"]
    assert asked["tool_call_id"] in {r["id"] for r in ran}
    copies = [r for r in results if r["status"] != "success"]
    assert len(copies) == 14
    assert all("this answer already makes the same call" in r["content"] for r in copies)
    assert (workspace / "notes.txt").read_text() == "hello\n"
    [end] = result.of_type("turn_end")
    assert end["status"] == "completed"
    assert "".join(e["text"] for e in result.of_type("message_delta")).endswith(
        "I wrote notes.txt."
    )


def test_copies_of_the_plan_in_one_planner_answer_propose_it_once(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "cli.py").write_text("import argparse\n")
    plan = [{"content": "Create hello.txt", "status": "pending"}]
    calls = [hermes("read_file", path="cli.py"), hermes("approve_plan", todos=plan)] * 6
    fake_openai.add_steps(
        [
            {"content": "\n".join(calls)},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi\n"}}
                ]
            },
            {"content": "Created hello.txt.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "--plan", "add hello", "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert result.code == 0, result.stderr
    assert (workspace / "hello.txt").read_text() == "hi\n"
    [end] = result.of_type("turn_end")
    assert end["status"] == "completed"
    assert not any("Stopped the turn" in e["message"] for e in result.of_type("error"))


def test_a_repeated_edit_that_failed_each_time_is_told_to_change_it_not_that_it_is_made(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """Bench run 28: an edit of the wrong file, refused twice, was then answered "The file
    already has that change", and the model told the user it was done."""
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / "test_calc.py").write_text("from calc import add\n")
    edit = {"path": "test_calc.py", "old_string": "return a - b", "new_string": "return a + b"}
    fake_openai.add_steps(
        [
            {"content": hermes("edit_file", **edit), "times": 3},
            {"content": "Not fixed.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(["chat", "fix it", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    *refused, guarded = result.of_type("tool_result")
    assert all("occurs once in calc.py" in r["content"] for r in refused) and len(refused) == 2
    assert "It failed each time with the error above" in guarded["content"]
    assert "already has that change" not in guarded["content"]
