"""`tool_result` statuses over LSP (`invincat/event`): every declined call is `rejected`,
whoever declined it (plan mode's allow-list, the user at the planner's `web_fetch`), and
only failures are `error` (protocol.md, plan-mode.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient

PLAN = [{"content": "Change the port to 9000"}]


def _call(name: str, **args: object) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _plan_steps() -> list[dict[str, Any]]:
    return [_call("write_todos", todos=PLAN), _call("approve_plan", todos=PLAN)]


def _result(client: InvincatClient, turn_id: str, name: str) -> dict[str, Any]:
    [result] = [
        e for e in client.turn_events(turn_id) if e["type"] == "tool_result" and e["name"] == name
    ]
    return result


async def _reject_the_plan(client: InvincatClient, turn_id: str) -> None:
    plan = await client.wait_event(
        "approval_requested", where=lambda e: e["event"]["kind"] == "plan"
    )
    assert (await client.resolve(plan["event"]["approval_id"], "reject"))["resolved"]
    assert (await client.turn_end(turn_id))["status"] == "completed"


async def test_a_plan_mode_refusal_of_write_file_is_rejected(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps([_call("write_file", path="x.txt", content="x"), *_plan_steps()])
    ref = await lsp.chat("do it", mode="plan")
    await _reject_the_plan(lsp, ref["turnId"])
    refused = _result(lsp, ref["turnId"], "write_file")
    assert refused["status"] == "rejected", refused
    assert "not available in plan mode" in refused["content"]
    assert not (workspace / "x.txt").exists()
    kinds = [e["kind"] for e in lsp.turn_events(ref["turnId"]) if e["type"] == "approval_requested"]
    assert kinds == ["plan"]  # refused without asking anyone


async def test_a_rejected_web_fetch_of_the_planner_is_rejected(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.add_steps([_call("web_fetch", url="https://example.invalid/spec"), *_plan_steps()])
    ref = await lsp.chat("plan the port change", mode="plan")
    asked = (await lsp.wait_event("approval_requested"))["event"]
    assert (asked["kind"], asked["tool_name"], asked["agent"]) == ("tool", "web_fetch", "planner")
    resolved = await lsp.resolve(asked["approval_id"], "reject", message="no network please")
    assert resolved["resolved"]
    await _reject_the_plan(lsp, ref["turnId"])
    fetch = _result(lsp, ref["turnId"], "web_fetch")
    assert fetch["status"] == "rejected", fetch
    assert "The user rejected this web_fetch call" in fetch["content"]
    assert "no network please" in fetch["content"]


async def test_a_tool_failure_is_an_error_not_a_rejection(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.add_steps([_call("read_file", path="missing.txt"), {"content": "No such file."}])
    ref = await lsp.chat("read missing.txt")
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"
    failed = _result(lsp, ref["turnId"], "read_file")
    assert failed["status"] == "error", failed
    assert "File not found: missing.txt" in failed["content"]
