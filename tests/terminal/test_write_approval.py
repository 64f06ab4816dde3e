"""Writes ask first: approve, reject with a message, edit args, approve always."""

from __future__ import annotations

import json
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def _write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def _tool_messages(server: FakeOpenAIServer) -> list[dict]:
    return [m for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]


def test_approve_writes_the_file_and_shows_the_diff(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([_write("notes.txt", "hello\n"), {"content": "Wrote notes.txt."}])
    result = run_invincat(
        ["chat", "write notes", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    assert (workspace / "notes.txt").read_text() == "hello\n"
    assert "+hello" in result.stdout and "notes.txt" in result.stdout
    assert "Wrote notes.txt." in result.stdout


def test_reject_leaves_the_file_untouched_and_tells_the_model_why(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([_write("notes.txt", "hello\n"), {"content": "OK, I will not."}])
    result = run_invincat(
        ["chat", "write notes", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="n\nuse README.md instead\n",
    )
    assert result.code == 0, result.stderr
    assert not (workspace / "notes.txt").exists()
    [tool_message] = _tool_messages(fake_openai)
    assert (
        "rejected" in tool_message["content"] and "use README.md instead" in tool_message["content"]
    )
    [resolved] = result.of_type("approval_resolved")
    assert resolved["decision"] == "reject"
    assert result.of_type("tool_result")[0]["status"] == "rejected"


def test_edit_runs_the_edited_arguments(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([_write("notes.txt", "hello\n"), {"content": "Done."}])
    edited = {"path": "docs/other.txt", "content": "edited by me\n"}
    result = run_invincat(
        ["chat", "write notes", "--cwd", str(workspace)],
        invincat_env,
        input="e\n" + json.dumps(edited) + "\ny\n",  # the edited call is asked about again
    )
    assert result.code == 0, result.stderr
    assert "Approval needed: Edited call: Write docs/other.txt" in result.stdout
    assert "+edited by me" in result.stdout
    assert not (workspace / "notes.txt").exists()
    assert (workspace / "docs" / "other.txt").read_text() == "edited by me\n"
    ai_call = next(m for m in fake_openai.chat_requests()[-1]["messages"] if m.get("tool_calls"))
    assert json.loads(ai_call["tool_calls"][0]["function"]["arguments"]) == edited


def test_approve_always_for_the_workspace_is_remembered_by_a_new_process(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([_write("a.txt", "A\n"), {"content": "first done"}])
    first = run_invincat(
        ["chat", "write a", "--json", "--cwd", str(workspace)], invincat_env, input="w\n"
    )
    assert first.code == 0, first.stderr
    [asked] = first.of_type("approval_requested")
    workspace_option = next(o for o in asked["always_options"] if o["scope"] == "workspace")
    assert str(workspace.resolve()) in workspace_option["label"]
    [resolved] = first.of_type("approval_resolved")
    assert resolved["remembered"] == workspace_option["label"]

    fake_openai.add_steps([_write("b.txt", "B\n"), {"content": "second done"}])
    second = run_invincat(["chat", "write b", "--json", "--cwd", str(workspace)], invincat_env)
    assert second.code == 0, second.stderr
    assert second.of_type("approval_requested") == []
    assert (workspace / "b.txt").read_text() == "B\n"


def test_execute_asks_and_session_rule_does_not_leak_to_other_commands(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": "echo one > one.txt"}}]},
            {"content": "ran"},
        ]
    )
    result = run_invincat(
        ["chat", "run it", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    [asked] = result.of_type("approval_requested")
    assert asked["tool_name"] == "execute" and "echo one" in asked["description"]
    assert (workspace / "one.txt").read_text() == "one\n"
    assert "[exit code: 0]" in result.of_type("tool_result")[0]["content"]


def test_an_edited_call_does_not_run_until_it_is_approved_again(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([_write("notes.txt", "hello\n"), {"content": "Done."}])
    edited = {"path": "other.txt", "content": "edited by me\n"}
    # e, the new arguments, then n at the edited call: nothing is written.
    result = run_invincat(
        ["chat", "write notes", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="e\n" + json.dumps(edited) + "\nn\nnot that either\n",
    )
    assert result.code == 0, result.stderr
    assert "Approval needed: Edited call: Write other.txt" in result.stderr
    assert "+edited by me" in result.stderr
    assert "'always' is not offered: the call was edited" in result.stderr
    assert not (workspace / "notes.txt").exists() and not (workspace / "other.txt").exists()
    [resolved] = result.of_type("approval_resolved")
    assert resolved["decision"] == "reject"


def test_input_ending_after_an_edit_leaves_the_call_unrun(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([_write("notes.txt", "hello\n"), {"content": "Done."}])
    edited = {"path": "other.txt", "content": "edited by me\n"}
    result = run_invincat(
        ["chat", "write notes", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="e\n" + json.dumps(edited) + "\n",
    )
    assert result.code == 1  # the approval stays pending, as when input ends at any approval
    assert not (workspace / "notes.txt").exists() and not (workspace / "other.txt").exists()


def test_a_write_of_what_the_file_already_holds_is_not_asked_and_says_so(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # Bench run 20: asked to fix calc.py, Qwen2.5-Coder-1.5B wrote test_calc.py back as it
    # was, less its final newline, was told "Wrote 5 lines", and went on reading.
    test = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    (workspace / "test_calc.py").write_text(test)
    same = {"path": "test_calc.py", "content": test.rstrip("\n")}
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "write_file", "arguments": same}]},
            {"content": "ok", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "fix calc.py", "--json", "--cwd", str(workspace)], invincat_env, input=""
    )
    assert result.code == 0, result.stderr
    assert result.of_type("approval_requested") == []
    [written] = result.of_type("tool_result")
    assert written["status"] == "error"
    assert written["content"] == (
        "test_calc.py already holds exactly this content (apart from its final newline): "
        "nothing to change, nothing was written. If the change belongs in another file, "
        "write or edit that file."
    )
    assert (workspace / "test_calc.py").read_text() == test  # its newline kept


def test_a_write_carrying_read_files_line_numbers_is_refused_unasked(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # Bench run 21: Qwen2.5-Coder-1.5B wrote calc.py back from read_file's numbered view.
    calc = "def add(a, b):\n    return a - b\n"
    (workspace / "calc.py").write_text(calc)
    numbered = "    1        def add(a, b):\n    2            return a + b\n    3\n"
    edit = {"path": "calc.py", "old_string": "a - b", "new_string": "  1\ta + b\n  2\tx\n  3\ty"}
    fixed = "def add(a, b):\n    return a + b\n"
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "calc.py", "content": numbered}},
                    {"name": "edit_file", "arguments": edit},
                ]
            },
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "calc.py", "content": fixed}}
                ],
                "match": {"any_message_contains": "line numbers"},
            },
            {"content": "Fixed.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "fix calc.py", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    refused = result.of_type("tool_result")[:2]
    assert {r["status"] for r in refused} == {"error"}
    contents = {r["name"]: r["content"] for r in refused}
    assert contents["write_file"].startswith(
        "content opens its lines with line numbers (1, 2, …) as read_file shows them: they "
        "are not part of calc.py. Nothing was written"
    )
    assert contents["edit_file"].startswith("new_string opens its lines with line numbers")
    # Only the write sent again without them was asked about, and it is what was written.
    [asked] = result.of_type("approval_requested")
    assert asked["args"]["content"] == fixed
    assert (workspace / "calc.py").read_text() == fixed
