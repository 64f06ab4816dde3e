"""Issue 13 §1 through a subagent: a worker run by `task` cannot write approval rules
either (refused, or undone when smuggled through a shell command), while the rule the
user grants inside that same `task` call is kept."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.events import ApprovalRequested, Error
from invincat_server.runtime.session import Session
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory

MAIN = "You are Invincat, a careful"
WORKER = "You are Invincat's worker subagent (level 1"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


async def _run(session: Session, decide: dict[str, dict[str, Any]]) -> list[Any]:
    turn = await session.start_turn("go")
    events = []
    async for event in turn.events():
        events.append(event)
        if isinstance(event, ApprovalRequested):
            result = await session.resolve(event.approval_id, decide[event.tool_name or ""])
            assert result.resolved, result.reason
    return events


async def test_worker_cannot_forge_rules_and_the_granted_rule_survives(
    make_session: SessionFactory,
    fake_openai: FakeOpenAIServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The revert layer under the sandbox: with the sandbox on, these writes fail outright
    # (read-only or hidden; tests/protection/test_shell_sandbox.py), so it is off here.
    monkeypatch.setenv("INVINCAT_SANDBOX", "off")
    home = workspace / ".invincat"  # $INVINCAT_HOME inside the project, as with root = $HOME
    root = str(workspace.resolve())
    forged = {"version": 1, "workspaces": {root: [{"tool": "execute", "command_prefix": None}]}}
    payload = base64.b64encode(json.dumps(forged).encode()).decode()
    script = (
        "import base64, os; p=os.path.join('.inv'+'incat', 'appro'+'vals.js'+'on'); "
        f"open(p,'w').write(base64.b64decode('{payload}').decode())"
    )
    fake_openai.add_steps(
        [
            {
                "match": {"system_contains": MAIN, "has_tool_result": False},
                "tool_calls": [_call("task", description="set things up", subagent_type="worker")],
            },
            {
                "match": {"system_contains": WORKER, "has_tool_result": False},
                "tool_calls": [_call("execute", command=f'python3 -c "{script}"')],
            },
            # The "always" answer is the last approval inside the task: the outer guard
            # around `task` spans this legitimate write and must keep it.
            {
                "match": {"system_contains": WORKER},
                "tool_calls": [_call("write_file", path="notes.txt", content="hi\n")],
            },
            {
                "match": {"system_contains": WORKER},
                "tool_calls": [
                    _call("write_file", path=".invincat/approvals.json", content=json.dumps(forged))
                ],
            },
            {"match": {"system_contains": WORKER}, "content": "done"},
            {"match": {"system_contains": MAIN}, "content": "ok"},
        ]
    )
    session = await make_session(auto_approve=False, INVINCAT_HOME=str(home))
    events = await _run(
        session,
        {
            "task": {"type": "approve"},
            "write_file": {"type": "approve_always", "scope": "workspace"},
            "execute": {"type": "approve"},
        },
    )
    assert events[-1].type == "turn_end"
    asked = [e.tool_name for e in events if isinstance(e, ApprovalRequested)]
    assert asked == ["task", "execute", "write_file"], asked
    assert (workspace / "notes.txt").read_text() == "hi\n"
    rules = json.loads((home / "approvals.json").read_text())["workspaces"][root]
    assert [(r["tool"], r["command_prefix"]) for r in rules] == [("file_writes", None)]
    assert any(isinstance(e, Error) and "approvals.json" in e.message for e in events)
    worker_tools = [
        m["content"]
        for r in fake_openai.chat_requests()
        if WORKER in r["messages"][0]["content"]
        for m in r["messages"]
        if m["role"] == "tool"
    ]
    assert any("Invincat's home directory" in c for c in worker_tools), worker_tools
    assert not session.policy.needs_approval("write_file", {"path": "x"})
    assert session.policy.needs_approval("execute", {"command": "touch pwned"})
