"""Plan mode in Neovim: the plan float, refine with feedback, approve, live todo statuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import RunNvim

PLAN_A = [{"content": "Create hello.txt with a greeting"}, {"content": "Report back"}]
PLAN_B = [{"content": "Create greeting.md instead"}, {"content": "Report back"}]


def _call(name: str, **args: object) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _todos(*statuses: str) -> dict[str, Any]:
    items = [{**item, "status": status} for item, status in zip(PLAN_B, statuses, strict=True)]
    return _call("write_todos", todos=items)


def _proposal(plan: list[dict[str, str]]) -> list[dict[str, Any]]:
    return [_call("write_todos", todos=plan), _call("approve_plan", todos=plan)]


def test_refining_then_approving_the_plan_runs_it_to_completed_todos(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            *_proposal(PLAN_A),
            *_proposal(PLAN_B),
            _todos("in_progress", "pending"),
            # Each intermediate todo state stays on screen for a while (the model "thinks"
            # 0.5 s), so the float's live statuses are seen however fast the machine is.
            {**_call("write_file", path="greeting.md", content="# Hello\n"), "delay": 0.5},
            _todos("completed", "in_progress"),
            {**_todos("completed", "completed"), "delay": 0.5},
            {"content": "Created greeting.md."},
        ]
    )
    result = nvim("plan")

    assert not result["opened_by_itself"]  # announced; opened by :Invincat plan
    assert result["float_focused"] and result["float_relative"] == "editor"
    assert result["focus_returned"]
    assert result["first"][0].strip().startswith("Proposed plan")
    assert "  1. [ ] Create hello.txt with a greeting" in result["first"]
    assert " a approve   r reject   f refine   q close" in result["first"]
    assert "  1. [ ] Create greeting.md instead" in result["second"]
    # The feedback reached the planner with the plan it refused.
    feedback = json.dumps(fake_openai.chat_requests()[2]["messages"])
    assert "use a markdown file called greeting.md" in feedback

    # Live statuses while executing: in progress, then completed.
    executing = [s for s in result["snapshots"] if s.startswith(" Executing")]
    assert any("1. [~] Create greeting.md instead" in s for s in executing)
    assert any("1. [x] Create greeting.md instead\n  2. [~] Report back" in s for s in executing)
    assert result["outcome"] == "completed"
    assert [t["status"] for t in result["todos"]] == ["completed", "completed"]
    assert "  1. [x] Create greeting.md instead" in result["final"]
    assert "  2. [x] Report back" in result["final"]
    assert (workspace / "greeting.md").read_text() == "# Hello\n"
    assert "Plan proposed (2 steps) — refinement requested" in result["chat"]
    assert "Plan proposed (2 steps) — approved" in result["chat"]


def test_a_plan_arriving_while_the_user_edits_takes_no_key(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    write_todos, approve_plan = _proposal(PLAN_A)
    # The plan arrives a while after the prompt, when the user is editing.
    fake_openai.add_steps([{**write_todos, "delay": 2}, approve_plan])
    result = nvim("plan_while_typing")

    typing = result["while_typing"]
    # Each "ax<Esc>" appended an x to the user's line; none reached the plan.
    assert typing["typed"].startswith("ax<Esc>ax<Esc>")
    assert typing["line"] == "x" * typing["typed"].count("ax<Esc>")
    assert typing["phase"] == "proposed" and not typing["float_open"]
    assert typing["mode"] == "n" and typing["same_window"]
    assert "Plan proposed (2 steps) — pending" in typing["chat"]

    # Rejected explicitly in the float: the planner is told why, nothing ran.
    assert result["phase"] == "rejected"
    assert "Plan proposed (2 steps) — rejected" in result["chat"]
    assert "The user rejected the plan: not now" in result["chat"]
    assert len(fake_openai.chat_requests()) == 2  # the main agent never ran


def test_a_range_plan_asked_for_its_prompt_still_sends_the_selected_lines(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    # The help promises `:[range]Invincat plan`: with no prompt and no plan yet, the
    # prompt is asked for, and the selection must not be lost on the way.
    (workspace / "app.py").write_text("one\ntwo\nthree\nfour\n")
    fake_openai.add_steps([{"content": "Nothing to plan."}])
    result = nvim("plan_range")

    (sent,) = result["sent"]
    assert sent["prompt"] == "plan the lines"
    assert sent["mode"] == "plan"
    assert sent["context"]["selections"] == [
        {
            "uri": result["uri"],
            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 3, "character": 0}},
        }
    ]
    assert [p["prompt"] for p in result["prompts"]] == ["Invincat plan: "]
