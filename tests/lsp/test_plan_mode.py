"""Plan mode and the planner's questions over LSP: `invincat/chat {mode: "plan"}`, plan and
question approvals resolved with `invincat/resolveApproval`, also after a restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient, start_client, stop_client

PLAN_A = [{"content": "Create hello.txt with a greeting"}, {"content": "Report back"}]
PLAN_B = [{"content": "Create greeting.md instead"}, {"content": "Report back"}]


def _call(name: str, **args: object) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _plan_steps(plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [_call("write_todos", todos=plan), _call("approve_plan", todos=plan)]


def _execution_steps(plan: list[dict[str, Any]], answer: str) -> list[dict[str, Any]]:
    """The main agent works through the plan, reporting progress with write_todos."""

    def todos(*statuses: str) -> dict[str, Any]:
        items = [{**item, "status": status} for item, status in zip(plan, statuses, strict=True)]
        return _call("write_todos", todos=items)

    return [
        todos("in_progress", "pending"),
        todos("completed", "in_progress"),
        todos("completed", "completed"),
        {"content": answer},
    ]


def _statuses(client: InvincatClient, turn_id: str) -> list[list[str]]:
    return [
        [item["status"] for item in event["items"]]
        for event in client.turn_events(turn_id)
        if event["type"] == "todos"
    ]


async def _approval(client: InvincatClient, kind: str, count: int = 1) -> dict[str, Any]:
    """The `count`-th approval_requested event of `kind`."""

    def nth(item: dict[str, Any]) -> bool:
        asked = [
            e
            for e in client.events
            if e["event"]["type"] == "approval_requested" and e["event"]["kind"] == kind
        ]
        return len(asked) >= count and item is asked[count - 1]

    return (await client.wait_event("approval_requested", where=nth))["event"]


async def test_a_plan_is_refined_then_approved_and_executed(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.add_steps(
        [*_plan_steps(PLAN_A), *_plan_steps(PLAN_B), *_execution_steps(PLAN_B, "Done with B.")]
    )
    ref = await lsp.chat("add a greeting", mode="plan")
    first = await _approval(lsp, "plan")
    assert [t["content"] for t in first["todos"]] == [t["content"] for t in PLAN_A]

    # Decisions that do not fit a plan are refused with a reason; the plan stays pending.
    wrong = await lsp.resolve(first["approval_id"], "answer", answers=["x"])
    assert wrong["resolved"] is False and "approve, refine, reject" in wrong["reason"]
    empty = await lsp.resolve(first["approval_id"], "refine")
    assert empty["resolved"] is False and "refine needs feedback" in empty["reason"]

    feedback = "use a markdown file called greeting.md"
    assert (await lsp.resolve(first["approval_id"], "refine", feedback=feedback))["resolved"]
    second = await _approval(lsp, "plan", 2)
    assert [t["content"] for t in second["todos"]] == [t["content"] for t in PLAN_B]
    # The planner's next request carries the feedback and the plan it refused.
    refine_request = json.dumps(fake_openai.chat_requests()[2]["messages"])
    assert feedback in refine_request and "Create hello.txt with a greeting" in refine_request

    assert (await lsp.resolve(second["approval_id"], "approve"))["resolved"]
    end = await lsp.turn_end(ref["turnId"])
    assert end["status"] == "completed"
    statuses = _statuses(lsp, ref["turnId"])
    assert statuses[0] == ["pending", "pending"] and statuses[-1] == ["completed", "completed"]
    handoff = fake_openai.chat_requests()[4]["messages"][-1]["content"]
    assert "1. Create greeting.md instead" in handoff and feedback in handoff
    deltas = [e.get("text", "") for e in lsp.turn_events(ref["turnId"])]
    assert "".join(deltas) == "Done with B."


async def test_planner_questions_are_answered_or_cancelled_and_a_rejected_plan_runs_nothing(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    name = {"question": "Which file name?", "options": ["hello.txt", "greeting.md"]}
    tone = {"question": "Which tone?"}
    fake_openai.add_steps(
        [
            _call("ask_user", questions=[name]),
            _call("ask_user", questions=[tone]),
            *_plan_steps(PLAN_A),
        ]
    )
    ref = await lsp.chat("greet", mode="plan")
    asked = await _approval(lsp, "question")
    assert asked["questions"] == [name]
    wrong = await lsp.resolve(asked["approval_id"], "approve")
    assert wrong["resolved"] is False and "answer, reject" in wrong["reason"]
    assert (await lsp.resolve(asked["approval_id"], "answer", answers=["greeting.md"]))["resolved"]

    second = await _approval(lsp, "question", 2)
    assert [q["question"] for q in second["questions"]] == ["Which tone?"]
    assert (await lsp.resolve(second["approval_id"], "reject"))["resolved"]

    plan = await _approval(lsp, "plan")
    assert (await lsp.resolve(plan["approval_id"], "reject", message="not now"))["resolved"]
    end = await lsp.turn_end(ref["turnId"])
    assert end["status"] == "completed"

    requests = fake_openai.chat_requests()
    answered = [m for m in requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "Which file name?" in answered and "A: greeting.md" in answered
    cancelled = [m for m in requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "Which tone?" in cancelled and "(cancelled)" in cancelled
    # Rejected: the planner is told why and stops; the main agent never runs.
    [verdict] = [
        e
        for e in lsp.turn_events(ref["turnId"])
        if e["type"] == "tool_result" and e["name"] == "approve_plan"
    ]
    assert verdict["content"].startswith("The user rejected the plan: not now")
    assert len(requests) == 4
    assert _statuses(lsp, ref["turnId"]) == [["pending", "pending"]]


async def test_a_plan_pending_across_a_restart_is_listed_and_resolving_it_executes(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    fake_openai.add_steps([*_plan_steps(PLAN_A), *_execution_steps(PLAN_A, "Executed.")])
    first = await start_client(invincat_env, workspace, editor)
    try:
        ref = await first.chat("greet", mode="plan")
        asked = await _approval(first, "plan")
    finally:
        await stop_client(first)  # the editor closes with the plan still pending

    second = await start_client(invincat_env, workspace, editor)
    try:
        [pending] = (await second.request("invincat/pendingApprovals", {}))["approvals"]
        assert pending["approval_id"] == asked["approval_id"] and pending["kind"] == "plan"
        assert pending["todos"] == asked["todos"]
        # A thread waiting for a decision cannot be offloaded; the error says what to do.
        with pytest.raises(JsonRpcException) as refused:
            await second.request("invincat/offload", {"threadId": ref["threadId"]})
        assert refused.value.code == -32013 and "resolve it before" in refused.value.message

        resolved = await second.resolve(asked["approval_id"], "approve")
        assert resolved["resolved"] is True and resolved["threadId"] == ref["threadId"]
        end = await second.turn_end(resolved["turnId"])
        assert end["status"] == "completed"
        assert _statuses(second, resolved["turnId"])[-1] == ["completed", "completed"]
        deltas = [e.get("text", "") for e in second.turn_events(resolved["turnId"])]
        assert "".join(deltas) == "Executed."
        assert (await second.request("invincat/pendingApprovals", {}))["approvals"] == []
    finally:
        await stop_client(second)
