"""Manual offload: older messages go to a readable, redacted file; requests shrink."""

from __future__ import annotations

import json
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

SECRET = "sk-proj-abcdefghijklmnopqrstuvwx1234567890"


async def test_offload_writes_the_file_redacted_and_the_next_request_is_smaller(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("".join(f"note {i}\n" for i in range(200)))
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"content": "Read the notes."},
            {"content": "Noted the key."},
            {"content": "Before offload."},
            {"content": "After offload."},
        ]
    )
    session = await make_session()
    thread_id, _ = await run_turn(session, "read notes.txt")
    await run_turn(session, f"my key is {SECRET}, keep it out of files", thread_id)
    await run_turn(session, "third question", thread_id)
    before = fake_openai.chat_requests()[-1]["messages"]

    report = await session.offload(thread_id)
    assert report["offloadedMessages"] >= 5
    assert report["tokensAfter"] < report["tokensBefore"]
    path = Path(report["file"])
    assert path == workspace.resolve() / ".invincat" / "offload" / f"{thread_id}.md"
    text = path.read_text()
    assert "read notes.txt" in text and "note 199" in text  # full tool output kept
    assert SECRET not in text and "[REDACTED" in text

    await run_turn(session, "fourth question", thread_id)
    after = fake_openai.chat_requests()[-1]["messages"]
    assert len(json.dumps(after)) < len(json.dumps(before))
    assert ".invincat/offload/" in after[1]["content"]
    assert after[-1] == {"role": "user", "content": "fourth question"}


async def test_offload_of_a_short_thread_moves_nothing(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    fake_openai.add_steps([{"content": "hi"}])
    session = await make_session()
    thread_id, _ = await run_turn(session, "hello")
    report = await session.offload(thread_id)
    assert report["offloadedMessages"] == 0 and report["file"] is None
