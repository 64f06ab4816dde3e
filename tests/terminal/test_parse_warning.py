"""A write that leaves a Python or JSON file unparsable, through the real `invincat chat`:
its result says so, and the model is sent that result; a write_file that would break a file
that parses is refused, nothing written."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def write(path: str, content: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def test_a_whole_file_write_that_breaks_a_python_file_is_refused_and_the_fix_is_written(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # Bench run 20: Qwen2.5-Coder-1.5B replaced cli.py with one indented line, was told
    # "Wrote 1 line", and said it was done; run 28: it replaced a test it was told not to
    # touch with one indented line. A new file that does not parse is written, and told.
    (workspace / "cli.py").write_text("import argparse\n")
    fixed = "import argparse\nparser = argparse.ArgumentParser()\n"
    fake_openai.add_steps(
        [
            write("cli.py", "    parser.add_argument('--verbose')"),
            {**write("cli.py", fixed), "match": {"has_tool_result": True}, "times": 1},
            {**write("new.py", "def f(:\n"), "match": {"has_tool_result": True}},
            {"content": "Fixed.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "add a flag", "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert result.code == 0, result.stderr
    refused, mended, new = result.of_type("tool_result")
    assert refused["status"] == "error"
    assert refused["content"].startswith(
        "cli.py parses as Python now and this content would not: unexpected indent (line 1). "
        "Nothing was written."
    )
    assert mended["content"] == "Wrote 2 lines to cli.py (overwrote existing file)."
    sent = [m for m in fake_openai.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert "parses as Python now" in sent[-1]["content"]
    assert (workspace / "cli.py").read_text() == fixed
    assert new["status"] == "success" and "new.py no longer parses as Python" in new["content"]
    assert (workspace / "new.py").read_text() == "def f(:\n"


def test_an_edit_that_breaks_json_is_told_and_one_of_a_broken_file_is_not(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "config.json").write_text('{"debug": false}\n')
    (workspace / "old.py").write_text("def f(:\n")
    edit = {"path": "config.json", "old_string": "false}", "new_string": "true,}"}
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "edit_file", "arguments": edit},
                    {"name": "write_file", "arguments": {"path": "old.py", "content": "def g(:\n"}},
                ]
            },
            {"content": "ok", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(["chat", "go", "--yes", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    results = {r["name"]: r["content"] for r in result.of_type("tool_result")}
    assert results["edit_file"].startswith("Edited config.json: 1 replacement. Warning:")
    assert "config.json no longer parses as JSON" in results["edit_file"]
    assert results["write_file"] == "Wrote 1 line to old.py (overwrote existing file)."
