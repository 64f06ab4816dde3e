"""The one-line summaries the core puts on tool_call / tool_result events (a call's is its
title in the phrase book: test_tool_phrases.py)."""

from __future__ import annotations

from invincat_server.runtime.tool_summary import result_summary


def test_result_summary_counts_following_lines() -> None:
    assert result_summary("3 matches\na\nb\n") == "3 matches (+2 lines)"
    assert result_summary("Wrote 1 line to notes.txt") == "Wrote 1 line to notes.txt"
    assert result_summary("") == ""
    assert result_summary("y" * 300) == "y" * 100


def test_events_carry_the_summary_on_the_wire() -> None:
    from invincat_server.runtime.events import ToolCall, ToolResult

    call = ToolCall(id="c1", name="execute", args={"command": "pytest -q"}).to_json_dict()
    result = ToolResult(id="c1", name="grep", status="success", content="3 matches\na\nb\nc")
    assert call["summary"] == "Run `pytest -q`"
    assert result.to_json_dict()["summary"] == "3 matches (+3 lines)"


def test_thread_history_carries_the_same_summaries() -> None:
    from langchain_core.messages import AIMessage, ToolMessage

    from invincat_server.runtime.history import messages_to_dicts

    call = {"id": "c1", "name": "read_file", "args": {"path": "a.py"}}
    history = messages_to_dicts(
        [
            AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="x = 1\ny = 2", tool_call_id="c1", name="read_file"),
        ]
    )
    assert history[0]["tool_calls"][0]["summary"] == "Read a.py"
    assert history[1]["summary"] == "x = 1 (+1 line)"


def test_result_summary_says_one_line_and_a_commands_exit_status_as_words() -> None:
    assert result_summary("x = 1\ny = 2") == "x = 1 (+1 line)"
    # `execute`'s closing status is not output: said after the count, not counted.
    assert result_summary("(no output)\n[exit code: 0]") == "(no output) [exit code: 0]"
    assert result_summary("ok\nmore\n[exit code: 1]") == "ok (+1 line) [exit code: 1]"
    assert result_summary("a\nb\nc\n[exit code: -9 (killed by SIGKILL)]") == (
        "a (+2 lines) [exit code: -9 (killed by SIGKILL)]"
    )
    assert result_summary("[exit code: 0]") == "[exit code: 0]"


def test_plural_says_one_and_many() -> None:
    from invincat_server.runtime.wording import plural

    assert plural(1, "cited entry", "cited entries") == "1 cited entry"
    assert plural(0, "cited entry", "cited entries") == "0 cited entries"
    assert plural(1, "line") == "1 line"
    assert plural(2, "line") == "2 lines"
