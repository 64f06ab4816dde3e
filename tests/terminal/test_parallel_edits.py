"""Several writes to one file in one model response, through the real `invincat chat`:
each applies to the file as the one before it left it, so none is lost."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def edit(path: str, old: str, new: str) -> dict[str, object]:
    return {"name": "edit_file", "arguments": {"path": path, "old_string": old, "new_string": new}}


def test_two_edits_of_one_file_in_one_response_both_land(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # Qwen2.5-Coder-1.5B sent two edits of cli.py in one response (bench run 19); run at
    # once, both read the file before either wrote, and the second write undid the first
    # while both reported success.
    (workspace / "cli.py").write_text("import argparse\n\nparser = 1\nargs = 2\n")
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    edit("cli.py", "parser = 1", "parser = 10"),
                    edit("cli.py", "args = 2", "args = 20"),
                    {"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}},
                ]
            },
            {"content": "done", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "change both", "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert result.code == 0, result.stderr
    assert [r["status"] for r in result.of_type("tool_result")] == ["success"] * 3
    assert (workspace / "cli.py").read_text() == "import argparse\n\nparser = 10\nargs = 20\n"
    assert (workspace / "b.txt").read_text() == "b\n"


def test_a_write_and_an_edit_of_one_file_in_one_response_each_report_what_happened(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # The calls of one response run as separate tasks, so either may go first; each sees
    # the file as the other left it, and its result says what it did to it.
    (workspace / "a.py").write_text("X = 1\n")
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.py", "content": "Y = 1\n"}},
                    edit("a.py", "Y = 1", "Y = 2"),
                ]
            },
            {"content": "done", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(["chat", "go", "--yes", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    results = {r["name"]: r for r in result.of_type("tool_result")}  # in the order run
    wrote, edited = results["write_file"], results["edit_file"]
    assert wrote["status"] == "success"
    if edited["status"] == "success":  # the write went first
        assert (workspace / "a.py").read_text() == "Y = 2\n"
    else:  # the edit went first, found no `Y = 1`, and changed nothing
        assert "not found" in edited["content"]
        assert (workspace / "a.py").read_text() == "Y = 1\n"
