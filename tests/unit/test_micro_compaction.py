"""Micro-compaction rules on synthetic histories."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from invincat_server.runtime.context.micro import (
    PLACEHOLDER_MARK,
    micro_compact,
    recent_groups_to_keep,
)


def _history(groups: int, tool: str = "read_file", size: int = 5_000) -> list:
    messages: list = []
    for n in range(groups):
        messages.append(HumanMessage(f"q{n}"))
        messages.append(
            AIMessage("", tool_calls=[{"id": f"c{n}", "name": tool, "args": {"path": f"f{n}"}}])
        )
        messages.append(ToolMessage("x" * size, tool_call_id=f"c{n}", name=tool))
    return messages


def test_kept_groups_grow_slowly() -> None:
    assert [recent_groups_to_keep(n) for n in (0, 5, 10, 30, 100)] == [3, 3, 4, 6, 13]


def test_old_bulky_reads_become_placeholders_and_recent_ones_stay() -> None:
    out = micro_compact(_history(12))
    tools = [m for m in out if isinstance(m, ToolMessage)]
    keep = recent_groups_to_keep(12)
    assert all(m.content.startswith(PLACEHOLDER_MARK) for m in tools[:-keep])
    assert all(m.content == "x" * 5_000 for m in tools[-keep:])


def test_small_outputs_and_write_results_are_never_compacted() -> None:
    small = micro_compact(_history(12, size=100))
    writes = micro_compact(_history(12, tool="write_file"))
    assert small == _history(12, size=100)
    assert writes == _history(12, tool="write_file")


def test_compaction_is_deterministic_and_does_not_mutate_the_input() -> None:
    history = _history(15)
    first, second = micro_compact(history), micro_compact(history)
    assert first == second
    assert all(m.content == "x" * 5_000 for m in history if isinstance(m, ToolMessage))
