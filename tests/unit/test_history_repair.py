"""The model never sees an orphan tool call or a stray tool result."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from invincat_server.runtime.agents.history_repair import INTERRUPTED_NOTE, repair_history


def _call(call_id: str, name: str = "execute") -> dict:
    return {"id": call_id, "name": name, "args": {"command": "sleep 100"}, "type": "tool_call"}


def test_cancelled_tool_call_gets_a_synthetic_result_before_the_next_prompt() -> None:
    history = [
        HumanMessage("run it"),
        AIMessage("", tool_calls=[_call("c1"), _call("c2")]),
        ToolMessage("done", tool_call_id="c1"),
        HumanMessage("try something else"),
    ]
    repaired = repair_history(history)
    assert [type(m).__name__ for m in repaired] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert repaired[3].tool_call_id == "c2" and repaired[3].content == INTERRUPTED_NOTE


def test_stray_and_duplicate_tool_results_are_dropped() -> None:
    history = [
        HumanMessage("x"),
        ToolMessage("orphan", tool_call_id="nope"),
        AIMessage("", tool_calls=[_call("c1")]),
        ToolMessage("one", tool_call_id="c1"),
        ToolMessage("two", tool_call_id="c1"),
    ]
    repaired = repair_history(history)
    assert [getattr(m, "content", None) for m in repaired] == ["x", "", "one"]


def test_malformed_tool_calls_are_not_sent_back() -> None:
    bad = AIMessage(
        "",
        invalid_tool_calls=[{"id": "c9", "name": "write_file", "args": "{oops", "error": "bad"}],
    )
    repaired = repair_history([HumanMessage("x"), bad, HumanMessage("again")])
    assert repaired[1].invalid_tool_calls == [] and repaired[1].content
    assert len(repaired) == 3


def test_valid_history_is_unchanged() -> None:
    history = [
        HumanMessage("x"),
        AIMessage("", tool_calls=[_call("c1")]),
        ToolMessage("ok", tool_call_id="c1"),
        AIMessage("done"),
    ]
    assert repair_history(history) == history
