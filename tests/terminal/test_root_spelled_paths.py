"""Paths a small model spells with the project root's own path, through the real
`invincat chat`: the approval names the file that will change, a read of the root's last
folder finds the file, and a write there is refused naming the file's real path."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def test_a_slashless_root_write_is_asked_about_by_its_real_path(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    spelled = str(workspace.resolve() / "notes.txt").lstrip("/")
    write = {"name": "write_file", "arguments": {"path": spelled, "content": "hi\n"}}
    fake_openai.add_steps(
        [{"tool_calls": [write]}, {"content": "done", "match": {"has_tool_result": True}}]
    )
    result = run_invincat(
        ["chat", "write notes", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    [asked] = result.of_type("approval_requested")
    assert asked["description"] == "Write file notes.txt"
    assert (workspace / "notes.txt").read_text() == "hi\n"


def test_the_roots_last_folder_is_forgiven_for_reads_and_named_for_writes(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # Qwen2.5-Coder-1.5B wrote its right fix of calc.py to `project/calc.py` (bench run
    # 19): a new folder and a second calc.py, the test still failing.
    (workspace / "calc.py").write_text("X = 1\n")
    name = workspace.resolve().name
    read = {"name": "read_file", "arguments": {"path": f"{name}/calc.py"}}
    write = {"name": "write_file", "arguments": {"path": f"{name}/calc.py", "content": "X = 2\n"}}
    again = {"name": "write_file", "arguments": {"path": "calc.py", "content": "X = 2\n"}}
    fake_openai.add_steps(
        [
            {"tool_calls": [read]},
            {"tool_calls": [write], "match": {"has_tool_result": True}},
            {"tool_calls": [again], "match": {"any_message_contains": "Nothing was written"}},
            {"content": "done", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "change calc", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    first, refused, written = result.of_type("tool_result")
    assert first["status"] == "success" and "X = 1" in first["content"]
    # The write by the folder's name is refused unasked, naming the file it meant.
    assert refused["status"] == "error"
    assert f"'{name}', the project folder's own name" in refused["content"]
    assert "this file is 'calc.py'" in refused["content"]
    assert not (workspace / name).exists()
    # Sent again with that path, it is asked about and writes the file at the root.
    [asked] = result.of_type("approval_requested")
    assert asked["tool_call_id"] == written["id"] and asked["description"] == "Write file calc.py"
    assert (workspace / "calc.py").read_text() == "X = 2\n"


def test_a_write_into_a_real_folder_named_like_the_root_goes_there(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    name = workspace.resolve().name
    (workspace / "calc.py").write_text("X = 1\n")
    (workspace / name).mkdir()
    write = {"name": "write_file", "arguments": {"path": f"{name}/calc.py", "content": "X = 2\n"}}
    fake_openai.add_steps(
        [{"tool_calls": [write]}, {"content": "done", "match": {"has_tool_result": True}}]
    )
    result = run_invincat(
        ["chat", "write", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    [asked] = result.of_type("approval_requested")
    assert asked["description"] == f"Write file {name}/calc.py"
    assert (workspace / name / "calc.py").read_text() == "X = 2\n"
    assert (workspace / "calc.py").read_text() == "X = 1\n"
