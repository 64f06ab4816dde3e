"""Paths a small model spells with the project root's own path, through the real
`invincat chat`: the approval names the file that will change, a read of the root's last
folder finds the file, and a write there goes where the path says."""

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


def test_the_roots_last_folder_is_forgiven_for_reads_only(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "calc.py").write_text("X = 1\n")
    name = workspace.resolve().name
    read = {"name": "read_file", "arguments": {"path": f"{name}/calc.py"}}
    write = {"name": "write_file", "arguments": {"path": f"{name}/calc.py", "content": "X = 2\n"}}
    fake_openai.add_steps(
        [
            {"tool_calls": [read]},
            {"tool_calls": [write], "match": {"has_tool_result": True}},
            {"content": "done", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "change calc", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    first = result.of_type("tool_result")[0]
    assert first["status"] == "success" and "X = 1" in first["content"]
    [asked] = result.of_type("approval_requested")
    assert asked["description"] == f"Write file {name}/calc.py"
    assert (workspace / "calc.py").read_text() == "X = 1\n"  # untouched
    assert (workspace / name / "calc.py").read_text() == "X = 2\n"
