"""End to end through the real CLI: a worker subagent's write asks on its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

MAIN = "You are Invincat, a careful"
WORKER = "You are Invincat's worker subagent"
REPORT = "Report: the user rejected writing notes.txt, so nothing changed."
START_WORKER = {
    "match": {"system_contains": MAIN, "has_tool_result": False},
    "tool_calls": [
        {
            "name": "task",
            "arguments": {"description": "rewrite notes.txt", "subagent_type": "worker"},
        }
    ],
}


def test_rejecting_a_workers_write_keeps_the_file_and_the_report_reaches_the_main_agent(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("original\n")
    fake_openai.add_steps(
        [
            START_WORKER,
            {
                "match": {"system_contains": WORKER, "has_tool_result": False},
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "new\n"}}
                ],
            },
            {"match": {"system_contains": WORKER}, "content": REPORT},
            {"match": {"system_contains": MAIN}, "content": "The worker left notes.txt alone."},
        ]
    )
    result = run_invincat(
        ["chat", "rewrite notes", "--json", "--cwd", str(workspace)],
        invincat_env,
        # approve `task`, then reject the subagent's write with a message
        input="y\nn\nkeep the original\n",
    )
    assert result.code == 0, result.stderr

    asked = result.of_type("approval_requested")
    assert [a["tool_name"] for a in asked] == ["task", "write_file"]
    assert asked[0]["description"] == "Start a worker subagent: rewrite notes.txt"
    assert "+new" in asked[1]["diff"] and asked[0]["approval_id"] != asked[1]["approval_id"]
    assert [r["decision"] for r in result.of_type("approval_resolved")] == ["approve", "reject"]
    assert (workspace / "notes.txt").read_text() == "original\n"

    results = {r["name"]: r for r in result.of_type("tool_result")}
    assert results["write_file"]["status"] == "rejected" and results["write_file"]["depth"] == 1
    assert results["task"] == {
        "type": "tool_result",
        "id": asked[0]["tool_call_id"],
        "name": "task",
        "status": "success",
        "content": REPORT,
        "depth": 0,
        "summary": REPORT,  # the core's one-line summary: a one-line result is itself
    }
    worker_followup = next(
        r
        for r in fake_openai.chat_requests()
        if WORKER in r["messages"][0]["content"] and r["messages"][-1]["role"] == "tool"
    )
    assert "keep the original" in worker_followup["messages"][-1]["content"]
    main_last = fake_openai.chat_requests()[-1]["messages"]
    assert main_last[0]["content"].startswith(MAIN)
    assert main_last[-1] == {
        "role": "tool",
        "content": REPORT,
        "tool_call_id": asked[0]["tool_call_id"],
    }
    assert result.of_type("turn_end")[0]["status"] == "completed"


def _worker_writes_as_text(fake_openai: FakeOpenAIServer) -> None:
    """As Qwen2.5-Coder-1.5B did in bench/real_model.py: the worker's call written as text."""
    args = {"path": "notes.txt", "content": "new\n"}
    call = f"```json\n{json.dumps({'name': 'write_file', 'arguments': args})}\n```"
    fake_openai.add_steps(
        [
            START_WORKER,
            {"match": {"system_contains": WORKER, "has_tool_result": False}, "content": call},
            {"match": {"system_contains": WORKER}, "content": "Report: notes.txt handled."},
            {"match": {"system_contains": MAIN}, "content": "Done."},
        ]
    )


@pytest.mark.parametrize(
    ("answers", "status", "left"),
    [("y\nn\n\n", "rejected", "original\n"), ("y\ny\n", "success", "new\n")],
    ids=["refused-writes-nothing", "approved-writes"],
)
def test_a_workers_call_written_as_text_asks_like_a_structured_one(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    answers: str,
    status: str,
    left: str,
) -> None:
    (workspace / "notes.txt").write_text("original\n")
    _worker_writes_as_text(fake_openai)
    result = run_invincat(
        ["chat", "rewrite notes", "--json", "--cwd", str(workspace)], invincat_env, input=answers
    )
    assert result.code == 0, result.stderr
    asked = result.of_type("approval_requested")
    assert [a["tool_name"] for a in asked] == ["task", "write_file"]
    assert "+new" in asked[1]["diff"]
    assert (workspace / "notes.txt").read_text() == left
    results = {r["name"]: r for r in result.of_type("tool_result")}
    assert results["write_file"]["status"] == status and results["write_file"]["depth"] == 1
    # The report is the worker's answer after the call, not the call's text.
    assert results["task"]["content"] == "Report: notes.txt handled."


def test_with_text_tool_calls_off_a_workers_text_is_its_report(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("original\n")
    _worker_writes_as_text(fake_openai)
    env = {**invincat_env, "INVINCAT_TEXT_TOOL_CALLS": "off"}
    result = run_invincat(
        ["chat", "rewrite notes", "--json", "--cwd", str(workspace)], env, input="y\n"
    )
    assert result.code == 0, result.stderr
    assert [a["tool_name"] for a in result.of_type("approval_requested")] == ["task"]
    assert (workspace / "notes.txt").read_text() == "original\n"
    [task] = result.of_type("tool_result")
    assert task["name"] == "task" and '"write_file"' in task["content"]


@pytest.mark.parametrize("approve", [True, False], ids=["approved-runs", "refused-runs-nothing"])
def test_a_task_written_as_a_tag_with_attributes_asks_and_starts_the_worker(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, approve: bool
) -> None:
    """Bench run 27: Qwen2.5-Coder-1.5B handed its fix to a worker so, and the turn ended
    with the tag as its answer."""
    (workspace / "notes.txt").write_text("original\n")
    tag = '<task description="rewrite notes.txt" subagent_type="worker"/>'
    fake_openai.add_steps(
        [
            {"match": {"system_contains": MAIN, "has_tool_result": False}, "content": tag},
            {
                "match": {"system_contains": WORKER, "has_tool_result": False},
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "notes.txt", "content": "new\n"}}
                ],
            },
            {"match": {"system_contains": WORKER}, "content": "Report: rewritten."},
            {"match": {"system_contains": MAIN}, "content": "Done."},
        ]
    )
    answers = "y\ny\n" if approve else "n\n\n"
    result = run_invincat(
        ["chat", "rewrite notes", "--json", "--cwd", str(workspace)], invincat_env, input=answers
    )
    assert result.code == 0, result.stderr
    asked = [a["tool_name"] for a in result.of_type("approval_requested")]
    assert asked == (["task", "write_file"] if approve else ["task"])
    assert (workspace / "notes.txt").read_text() == ("new\n" if approve else "original\n")
    workers = [r for r in fake_openai.chat_requests() if WORKER in json.dumps(r["messages"][0])]
    assert bool(workers) == approve
