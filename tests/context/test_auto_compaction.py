"""Auto-compaction: past the threshold, older turns become one summary message."""

from __future__ import annotations

from pathlib import Path

from invincat_server.runtime.context.middleware import SUMMARY_SYSTEM_PROMPT
from invincat_server.runtime.context.window import SUMMARY_HEADER
from invincat_server.runtime.events import ContextUsage
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

WINDOW = 6_000
THRESHOLD = 0.8


def _estimate(messages: list[dict]) -> int:
    from langchain_core.messages.utils import count_tokens_approximately

    return count_tokens_approximately(messages)


async def test_threshold_triggers_a_summary_and_the_next_request_is_below_it(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    (workspace / "data.txt").write_text("".join(f"record {i}: some value\n" for i in range(300)))
    summary = "SUMMARY: the user had data.txt read several times; nothing changed."
    fake_openai.add_steps(
        [{"match": {"system_contains": SUMMARY_SYSTEM_PROMPT[:40]}, "content": summary}]
    )
    for n in range(8):
        fake_openai.add_steps(
            [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "data.txt"}}]},
                {"content": f"Answer {n}: it has 300 records."},
            ]
        )
    session = await make_session(
        INVINCAT_CONTEXT_WINDOW=str(WINDOW),
        INVINCAT_COMPACTION_THRESHOLD=str(THRESHOLD),
        INVINCAT_MICRO_COMPACTION="false",
    )
    thread_id = None
    compactions: list[ContextUsage] = []
    for n in range(8):
        thread_id, events = await run_turn(session, f"question {n}: how many records?", thread_id)
        compactions += [e for e in events if isinstance(e, ContextUsage) and e.compacted]
        if compactions:
            break
    assert compactions, "auto-compaction never triggered"
    report = compactions[0]
    assert report.tokens_before is not None and report.tokens_before > THRESHOLD * WINDOW
    assert report.tokens < THRESHOLD * WINDOW

    summary_requests = [
        r
        for r in fake_openai.chat_requests()
        if SUMMARY_SYSTEM_PROMPT[:40] in str(r["messages"][0])
    ]
    assert len(summary_requests) == 1
    main_after = [
        r
        for r in fake_openai.chat_requests()
        if SUMMARY_SYSTEM_PROMPT[:40] not in str(r["messages"][0])
    ][-1]
    messages = main_after["messages"]
    assert messages[0]["role"] == "system"
    assert messages[1]["role"] == "user" and messages[1]["content"].startswith(SUMMARY_HEADER)
    assert summary in messages[1]["content"]
    # the current turn is verbatim
    assert any(
        m["role"] == "user" and m["content"] == f"question {n}: how many records?" for m in messages
    )
    assert _estimate(messages[1:]) < THRESHOLD * WINDOW
    # history is untouched
    history = await session.history(thread_id)
    assert sum(1 for m in history if m["role"] == "user") == n + 1
