"""An edit whose text is not in the file named, but is in the one file beside it: the error
says where, through the real `invincat chat` and the fake server (bench run 15: the right
fix of calc.py sent with the path test_calc.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat
from tests.terminal.planted import OUTSIDE_MARKER, STORE_MARKER, plant_unreadable

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def edit(path: str, old: str, new: str, **match: Any) -> dict[str, Any]:
    args = {"path": path, "old_string": old, "new_string": new}
    return {"tool_calls": [{"name": "edit_file", "arguments": args}], "match": match}


def test_the_error_names_the_file_beside_it_that_holds_the_text_and_that_edit_asks(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "calc.py").write_text(CALC)
    (workspace / "test_calc.py").write_text(TEST)
    fake_openai.add_steps(
        [
            edit("test_calc.py", "return a - b", "return a + b", has_tool_result=False),
            edit("calc.py", "return a - b", "return a + b", has_tool_result=True),
            {"content": "Fixed add in calc.py.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "fix calc.py", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    missed, fixed = result.of_type("tool_result")
    assert missed["status"] == "error"
    assert "not found in test_calc.py, but it occurs once in calc.py" in missed["content"]
    # The hint made no change and asked nothing: only the second edit is asked about.
    [asked] = result.of_type("approval_requested")
    assert asked["args"]["path"] == "calc.py"
    assert fixed["status"] == "success"
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (workspace / "test_calc.py").read_text() == TEST


def test_no_file_is_named_that_the_model_may_not_read_or_that_is_not_the_only_one(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    outside, store = plant_unreadable(workspace)
    (workspace / "notes.txt").write_text("nothing here\n")
    os.symlink(outside, workspace / "link.txt")  # a link beside it, leading out
    os.link(store, workspace / "store-copy.json")  # a hard link of the memory store
    (workspace / "a.txt").write_text("twice\n")
    (workspace / "b.txt").write_text("twice\n")
    fake_openai.add_steps(
        [
            edit("notes.txt", OUTSIDE_MARKER, "x", has_tool_result=False),
            edit("notes.txt", STORE_MARKER, "x", has_tool_result=True),
            edit("notes.txt", "twice", "x", has_tool_result=True),
            {"content": "None of them.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "edit notes", "--json", "--cwd", str(workspace)], invincat_env, input=""
    )
    assert result.code == 0, result.stderr
    results = result.of_type("tool_result")
    assert [r["status"] for r in results] == ["error"] * 3
    for missed in results:
        assert "not found in notes.txt; read the file again" in missed["content"]
        assert "occurs once" not in missed["content"]
    assert result.of_type("approval_requested") == []
