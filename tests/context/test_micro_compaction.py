"""Micro-compaction over a long session: old reads become placeholders in what the model
receives, recent ones stay verbatim, history keeps everything, and a re-read works."""

from __future__ import annotations

from pathlib import Path

from invincat_server.runtime.context.micro import PLACEHOLDER_MARK, recent_groups_to_keep
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

LINES = 4_000
TURNS = 30


def _file_text(n: int) -> str:
    return "".join(f"f{n:02d} line {i}\n" for i in range(LINES))


def _read_turn(n: int) -> list[dict]:
    return [
        {
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": f"f{n:02d}.txt", "limit": LINES}}
            ]
        },
        {"content": f"Read file {n}."},
    ]


async def test_thirty_reads_keep_recent_groups_verbatim_and_placeholder_the_rest(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    for n in range(1, TURNS + 1):
        (workspace / f"f{n:02d}.txt").write_text(_file_text(n))
        fake_openai.add_steps(_read_turn(n))
    session = await make_session(INVINCAT_AUTO_COMPACTION="false")
    thread_id = None
    for n in range(1, TURNS + 1):
        thread_id, events = await run_turn(session, f"read file {n}", thread_id)
        assert events[-1].status == "completed"

    last = fake_openai.chat_requests()[-1]["messages"]
    tool_messages = [m for m in last if m["role"] == "tool"]
    assert len(tool_messages) == TURNS
    keep = recent_groups_to_keep(TURNS)
    verbatim, compacted = tool_messages[-keep:], tool_messages[:-keep]
    for offset, message in enumerate(verbatim):
        n = TURNS - keep + 1 + offset
        assert f"f{n:02d} line {LINES - 1}" in message["content"]
    for n, message in enumerate(compacted, start=1):
        content = message["content"]
        assert content.startswith(PLACEHOLDER_MARK)
        assert f'path="f{n:02d}.txt"' in content and f"{LINES} lines" in content
        assert f"f{n:02d} line 0" in content  # the head is kept
        assert f"f{n:02d} line {LINES - 1}" not in content
        assert len(content) < 1_000

    # The checkpointed history still has every full output.
    history = await session.history(thread_id)
    outputs = [m["content"] for m in history if m["role"] == "tool"]
    assert all(f"line {LINES - 1}" in out for out in outputs) and len(outputs) == TURNS

    # The model can re-read a placeholdered file and gets it whole.
    fake_openai.add_steps(_read_turn(1))
    await run_turn(session, "read file 1 again", thread_id)
    newest = [m for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"][-1]
    assert "f01 line 3999" in newest["content"]
