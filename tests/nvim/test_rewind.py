"""`:Invincat rewind` end to end in headless Neovim against the real server: the turn's
files come back (the closed one on disk byte for byte, the open one in its buffer through
workspace/applyEdit, undoable), a file changed by hand is kept when the user says so, and
the conversation forgets the turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import RunNvim

WRITTEN = b"first line\r\nsecond line\r\n"
OPEN = "alpha\nbeta\ngamma\n"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_rewind_picks_a_turn_shows_the_plan_asks_and_restores(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "written.txt").write_bytes(WRITTEN)
    (workspace / "open.txt").write_text(OPEN)
    fake_openai.add_steps(
        [
            _call("write_file", path="written.txt", content="rewritten\n"),
            _call("edit_file", path="open.txt", old_string="beta", new_string="BETA"),
            _call("write_file", path="created.txt", content="by the agent\n"),
            {"content": "Done."},
        ]
    )
    result = nvim("rewind")

    assert result["edited"] == ["alpha", "BETA", "gamma"]
    turn_prompt = next(p for p in result["prompts"] if p["prompt"].startswith("Rewind to"))
    assert turn_prompt["items"] == ["1. change three files  [created.txt, open.txt, written.txt]"]
    plan = result["plan"]
    assert plan[0] == "Back to before turn 1"
    assert "  modify open.txt  (in its buffer; changed since Invincat wrote it)" in plan
    assert "  delete created.txt  (changed since Invincat wrote it)" in plan
    assert "  modify written.txt" in plan and "-rewritten" in plan and "+beta" in plan
    assert result["float_closed"]

    done = result["done"]
    assert sorted(done["restored"]) == ["open.txt", "written.txt"]
    assert done["skipped"] == ["created.txt"] and done["conversation_removed"] == 8
    assert (workspace / "written.txt").read_bytes() == WRITTEN
    assert (workspace / "created.txt").read_text() == "changed by hand\n"
    # The buffer is back, unsaved (the disk never had the agent's edit); `u` redoes it.
    assert result["restored"] == ["alpha", "beta", "gamma"] and result["modified"]
    assert (workspace / "open.txt").read_text() == OPEN
    assert result["undone"] == ["alpha", "BETA", "gamma"]
    # The user message, 3 tool calls, their 3 results and the answer: forgotten.
    assert "Done." not in result["chat"]
    assert any("kept created.txt" in n["message"] for n in result["notifications"])
