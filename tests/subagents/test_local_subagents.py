"""Local subagents (`task`) in-process against the fake model over HTTP: tool sets,
approvals inside subagents, nesting and tool-call bounds, parallel tasks, restarts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from invincat_server.runtime.config import load_settings
from invincat_server.runtime.events import ApprovalRequested
from invincat_server.runtime.extensions.subagents import limits_from
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.session import Session
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory

MAIN = "You are Invincat, a careful"
EXPLORER = "You are Invincat's explorer subagent"
WORKER_1 = "You are Invincat's worker subagent (level 1"
WORKER_2 = "You are Invincat's worker subagent (level 2"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


def _task(description: str, kind: str) -> dict[str, Any]:
    return _call("task", description=description, subagent_type=kind)


def _requests(server: FakeOpenAIServer, system: str) -> list[dict[str, Any]]:
    return [r for r in server.chat_requests() if system in r["messages"][0]["content"]]


def _tool_names(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


def _tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def _run(session: Session, prompt: str, decide: dict[str, dict[str, Any]]) -> list[Any]:
    """Run a turn, answering approvals by tool name; returns every event."""
    turn = await session.start_turn(prompt)
    events = []
    async for event in turn.events():
        events.append(event)
        if isinstance(event, ApprovalRequested):
            result = await session.resolve(event.approval_id, decide[event.tool_name or ""])
            assert result.resolved, result.reason
    assert events[-1].type == "turn_end"
    return events


async def test_explorer_has_no_write_tools_and_a_write_it_emits_is_refused_unasked(
    make_session: SessionFactory, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "match": {"system_contains": MAIN, "has_tool_result": False},
                "tool_calls": [_task("look around", "explorer")],
            },
            {
                "match": {"system_contains": EXPLORER, "has_tool_result": False},
                "tool_calls": [
                    _call("write_file", path="hack.txt", content="x"),
                    _call("ls", path="."),
                ],
            },
            {"match": {"system_contains": EXPLORER}, "content": "Found only .git."},
            {"match": {"system_contains": MAIN}, "content": "ok"},
        ]
    )
    session = await make_session(auto_approve=False)
    events = await _run(session, "explore", {"task": {"type": "approve"}})

    assert not (workspace / "hack.txt").exists()
    asked = [e.tool_name for e in events if e.type == "approval_requested"]
    assert asked == ["task"]  # the refused write was never offered for approval
    [first, second] = _requests(fake_openai, EXPLORER)
    assert not _tool_names(first) & {"write_file", "edit_file", "execute", "task"}
    assert {"read_file", "ls", "glob", "grep"} <= _tool_names(first)
    refusal, listing = _tool_messages(second)
    assert "`write_file` is not available to the explorer subagent; nothing ran" in refusal
    assert ".git" in listing  # the allowed call in the same response still ran
    results = {e.name: e for e in events if e.type == "tool_result"}
    assert results["write_file"].status == "rejected" and results["write_file"].depth == 1
    assert results["task"].content == "Found only .git." and results["task"].depth == 0
    assert _tool_messages(fake_openai.chat_requests()[-1]) == ["Found only .git."]


async def test_nesting_depth_is_bounded_with_a_clear_message(
    make_session: SessionFactory, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "match": {"system_contains": MAIN, "has_tool_result": False},
                "tool_calls": [_task("level one work", "worker")],
            },
            {
                "match": {"system_contains": WORKER_1, "has_tool_result": False},
                "tool_calls": [_task("level two work", "worker")],
            },
            {
                "match": {"system_contains": WORKER_2, "has_tool_result": False},
                "tool_calls": [_task("level three work", "explorer")],
            },
            {"match": {"system_contains": WORKER_2}, "content": "L2: could not delegate."},
            {"match": {"system_contains": WORKER_1}, "content": "L1: got L2's report."},
            {"match": {"system_contains": MAIN}, "content": "done"},
        ]
    )
    session = await make_session(auto_approve=True)
    events = await _run(session, "nest", {})

    assert "task" in _tool_names(_requests(fake_openai, WORKER_1)[0])
    level_two = _requests(fake_openai, WORKER_2)
    assert "task" not in _tool_names(level_two[0])
    [refusal] = _tool_messages(level_two[1])
    assert "Subagents nest at most 2 levels deep" in refusal and "level 2" in refusal
    assert _requests(fake_openai, EXPLORER) == []  # no level-3 agent ever ran
    assert _tool_messages(_requests(fake_openai, WORKER_1)[1]) == ["L2: could not delegate."]
    assert _tool_messages(fake_openai.chat_requests()[-1]) == ["L1: got L2's report."]
    depths = [(e.name, e.depth) for e in events if e.type == "tool_call"]
    assert depths == [("task", 0), ("task", 1), ("task", 2)]


async def test_tool_call_budget_stops_a_subagent_with_a_clear_message(
    make_session: SessionFactory, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "match": {"system_contains": MAIN, "has_tool_result": False},
                "tool_calls": [_task("list forever", "explorer")],
            },
            {
                "match": {"system_contains": EXPLORER},
                "times": 20,
                "tool_calls": [_call("ls", path=".")],
            },
            {"match": {"system_contains": MAIN}, "content": "stopped"},
        ]
    )
    session = await make_session(auto_approve=True, INVINCAT_SUBAGENT_MAX_TOOL_CALLS="3")
    await _run(session, "loop", {})

    explorer = _requests(fake_openai, EXPLORER)
    # 3 calls run, the 4th is refused with a warning, the 5th response ends the run.
    assert len(explorer) == 5
    assert "at most 3 tool calls" in explorer[0]["messages"][0]["content"]
    assert "tool-call limit reached" in _tool_messages(explorer[4])[-1]
    [report] = _tool_messages(fake_openai.chat_requests()[-1])
    assert report.startswith(
        "[The explorer subagent was stopped: it reached its limit of 3 tool calls.]"
    )


async def test_two_parallel_workers_keep_separate_approvals_and_checkpoints(
    make_session: SessionFactory, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "match": {"system_contains": MAIN, "has_tool_result": False},
                "tool_calls": [
                    _task("write a.txt", "worker"),
                    _task("write b.txt", "worker"),
                ],
            },
            {
                "match": {"system_contains": WORKER_1, "last_user_contains": "a.txt"},
                "tool_calls": [_call("write_file", path="a.txt", content="A\n")],
            },
            {
                "match": {"system_contains": WORKER_1, "last_user_contains": "b.txt"},
                "tool_calls": [_call("write_file", path="b.txt", content="B\n")],
            },
            {
                "match": {"system_contains": WORKER_1, "any_message_contains": "write a.txt"},
                "content": "report A",
            },
            {
                "match": {"system_contains": WORKER_1, "any_message_contains": "write b.txt"},
                "content": "report B",
            },
            {"match": {"system_contains": MAIN}, "content": "both done"},
        ]
    )
    session = await make_session(auto_approve=False)
    turn = await session.start_turn("two things")
    asked: list[ApprovalRequested] = []
    async for event in turn.events():
        if isinstance(event, ApprovalRequested):
            asked.append(event)
            if event.tool_name == "task":
                decision = {"type": "approve"}
            else:
                keep = event.args["path"] == "a.txt"
                decision = {"type": "approve"} if keep else {"type": "reject"}
            assert (await session.resolve(event.approval_id, decision)).resolved

    assert turn.status == "completed"
    assert (workspace / "a.txt").read_text() == "A\n"
    assert not (workspace / "b.txt").exists()
    assert len({a.approval_id for a in asked}) == len(asked) == 4
    assert sorted(_tool_messages(fake_openai.chat_requests()[-1])) == ["report A", "report B"]


async def test_a_pending_subagent_approval_survives_a_restart(
    make_session: SessionFactory,
    fake_openai: FakeOpenAIServer,
    workspace: Path,
    invincat_monkeyenv: dict[str, str],
) -> None:
    fake_openai.add_steps(
        [
            {
                "match": {"system_contains": MAIN, "has_tool_result": False},
                "tool_calls": [_task("write notes", "worker")],
            },
            {
                "match": {"system_contains": WORKER_1, "has_tool_result": False},
                "tool_calls": [_call("write_file", path="notes.txt", content="kept\n")],
            },
            {"match": {"system_contains": WORKER_1}, "content": "wrote notes.txt"},
            {"match": {"system_contains": MAIN}, "content": "all done"},
        ]
    )
    first = await make_session(auto_approve=False)
    turn = await first.start_turn("notes please")
    async for event in turn.events():
        if isinstance(event, ApprovalRequested):
            if event.tool_name == "task":
                assert (await first.resolve(event.approval_id, {"type": "approve"})).resolved
            else:
                break  # the process "dies" with the subagent's write pending
    await first.close()

    async with Session(load_settings(), Workspace(workspace)) as second:
        [pending] = await second.pending_approvals(turn.thread_id)
        assert pending.tool_name == "write_file"
        result = await second.resolve(pending.approval_id, {"type": "approve"})
        assert result.resolved and result.turn is not None
        events = [e async for e in result.turn.events()]
    assert result.turn.status == "completed"
    assert (workspace / "notes.txt").read_text() == "kept\n"
    task_result = next(e for e in events if e.type == "tool_result" and e.name == "task")
    assert task_result.content == "wrote notes.txt"
    assert _tool_messages(fake_openai.chat_requests()[-1]) == ["wrote notes.txt"]


async def test_cancelling_during_a_subagent_approval_leaves_the_thread_usable(
    make_session: SessionFactory, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "match": {"system_contains": MAIN, "last_user_contains": "first"},
                "tool_calls": [_task("write x", "worker")],
            },
            {
                "match": {"system_contains": WORKER_1},
                "tool_calls": [_call("write_file", path="x.txt", content="x")],
            },
            {
                "match": {"system_contains": MAIN, "last_user_contains": "second"},
                "content": "fresh start",
            },
        ]
    )
    session = await make_session(auto_approve=False)
    turn = await session.start_turn("first")
    async for event in turn.events():
        if isinstance(event, ApprovalRequested):
            if event.tool_name == "task":
                await session.resolve(event.approval_id, {"type": "approve"})
            else:
                session.cancel(turn.turn_id)
    assert turn.status == "cancelled"
    assert await session.pending_approvals(turn.thread_id) == []

    again = await session.start_turn("second", turn.thread_id)
    events = [e async for e in again.events()]
    assert again.status == "completed", events
    assert not (workspace / "x.txt").exists()
    last = fake_openai.chat_requests()[-1]["messages"]
    assert "interrupted before it finished" in _tool_messages({"messages": last})[0]


def test_out_of_range_limits_fall_back_to_the_defaults_with_a_notice() -> None:
    notices: list[str] = []
    limits = limits_from(
        {"subagent_max_tool_calls": 7},
        {"INVINCAT_SUBAGENT_MAX_DEPTH": "9", "INVINCAT_SUBAGENT_MAX_TOOL_CALLS": "3"},
        notices.append,
    )
    assert (limits.max_depth, limits.max_tool_calls) == (2, 7)  # options win over env
    assert notices == [
        "INVINCAT_SUBAGENT_MAX_DEPTH must be a whole number from 1 to 5, got '9'; using 2."
    ]
