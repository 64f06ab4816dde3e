"""Live `execute` output (`tool_output` events) never shows a memory store line that the
tool result withholds: a command reading the store through a path no guard recognises
prints the line live, and neither the live events nor the result carry it."""

from __future__ import annotations

from pathlib import Path

from invincat_server.runtime.agents.memory_guard import WITHHELD
from invincat_server.runtime.events import ToolOutput, ToolResult
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

MARKER = "OKAPI-LIVE-MEMORY-MARKER-7"
# The path is assembled at run time, so the command text never names the store.
READ_STORE = (
    'echo before; python3 -c "import os; '
    "print(open(os.path.join('.inv'+'incat','memory_pro'+'ject.json')).read())\"; echo after"
)


async def test_live_output_never_shows_a_withheld_store_line(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    session = await make_session()
    report = session.memory.apply(
        "project",
        {
            "operations": [
                {
                    "op": "create",
                    "scope": "project",
                    "section": "Secrets",
                    "content": f"The marker is {MARKER}",
                    "score": 80,
                }
            ]
        },
        actor="user",
    )
    assert not report.rejected
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": READ_STORE}}]},
            {"content": "done"},
        ]
    )
    _, events = await run_turn(session, "show me the store")

    [result] = [e for e in events if isinstance(e, ToolResult)]
    assert WITHHELD in result.content, result.content  # the command did read the store
    assert MARKER not in result.content
    live = [e for e in events if isinstance(e, ToolOutput)]
    assert live, "no live output was emitted"
    assert {e.id for e in live} == {result.id}
    shown = "".join(e.text for e in live)
    assert "before\n" in shown and "after" in shown  # the harmless lines do show live
    assert MARKER not in shown, shown
    assert WITHHELD in shown


async def test_a_subagents_live_output_carries_its_depth(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    main, worker = "You are Invincat, a careful", "You are Invincat's worker subagent (level 1"
    fake_openai.add_steps(
        [
            {
                "match": {"system_contains": main, "has_tool_result": False},
                "tool_calls": [
                    {"name": "task", "arguments": {"description": "run", "subagent_type": "worker"}}
                ],
            },
            {
                "match": {"system_contains": worker, "has_tool_result": False},
                "tool_calls": [{"name": "execute", "arguments": {"command": "echo from-worker"}}],
            },
            {"match": {"system_contains": worker}, "content": "ran it"},
            {"match": {"system_contains": main}, "content": "done"},
        ]
    )
    session = await make_session()
    _, events = await run_turn(session, "delegate")
    [result] = [e for e in events if isinstance(e, ToolResult) and e.name == "execute"]
    live = [e for e in events if isinstance(e, ToolOutput)]
    assert [(e.id, e.text, e.depth) for e in live] == [(result.id, "from-worker\n", 1)]
