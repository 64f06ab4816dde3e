"""Chat turns over LSP: streamed events, progress, threads, and a fast `initialize`."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.lsp.client import (
    InvincatClient,
    start_client,
    start_tcp_client,
    stop_client,
    wait_until,
)

ANSWER = "Hello from the fake model, streamed in small chunks."


async def test_a_chat_turn_streams_deltas_and_ends_with_turn_end(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.add_steps([{"content": ANSWER, "chunk_size": 5}])
    ref = await lsp.chat("say hello")
    assert set(ref) == {"threadId", "turnId"}
    end = await lsp.turn_end(ref["turnId"])

    events = lsp.turn_events(ref["turnId"])
    assert events[0] == {
        "type": "turn_start",
        "thread_id": ref["threadId"],
        "turn_id": ref["turnId"],
    }
    deltas = [e["text"] for e in events if e["type"] == "message_delta"]
    assert len(deltas) > 5 and "".join(deltas) == ANSWER
    assert events[-1] == end and end["status"] == "completed"
    assert all(e["threadId"] == ref["threadId"] for e in lsp.events)
    # Work-done progress: created by the server, begun cancellable, ended with the status.
    reports = lsp.progress_reports[f"invincat-turn-{ref['turnId']}"]
    await wait_until(lambda: isinstance(reports[-1], types.WorkDoneProgressEnd), what="end")
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert reports[-1].message == "Turn completed"


async def test_progress_says_what_each_call_does_in_the_phrase_books_words(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    """A report per tool call in the words of its `summary`, the arguments redacted: a key
    the model searches for reaches neither the progress bar nor the event's summary."""
    (workspace / "notes.txt").write_text("n\n")
    key = "sk-proj-" + "a1B2c3D4" * 6
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"tool_calls": [{"name": "grep", "arguments": {"pattern": key}}]},
            {"content": "Looked."},
        ]
    )
    ref = await lsp.chat("look")
    await lsp.turn_end(ref["turnId"])
    reports = lsp.progress_reports[f"invincat-turn-{ref['turnId']}"]
    await wait_until(lambda: isinstance(reports[-1], types.WorkDoneProgressEnd), what="end")
    messages = [r.message for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    assert "Reading notes.txt" in messages
    [searching] = [m for m in messages or [] if m and m.startswith("Searching for `")]
    assert searching == "Searching for `[REDACTED:openai_key]`" and key not in str(reports)
    calls = [e for e in lsp.turn_events(ref["turnId"]) if e["type"] == "tool_call"]
    assert [c["summary"] for c in calls] == [
        "Read notes.txt",
        "Search for `[REDACTED:openai_key]`",
    ]
    assert calls[1]["args"] == {"pattern": key}  # the call itself, as the model proposed it


async def test_a_waiting_chat_answers_when_the_turn_ended(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.add_steps([{"content": "first"}, {"content": "second answer"}])
    first = await lsp.chat("one")
    await lsp.turn_end(first["turnId"])
    second = await lsp.chat("two", threadId=first["threadId"], wait=True)
    assert second["threadId"] == first["threadId"] and second["status"] == "completed"
    # The answer comes after every event of the turn, turn_end included.
    assert lsp.turn_events(second["turnId"])[-1]["type"] == "turn_end"

    listed = await lsp.request("invincat/threads/list", {})
    assert [t["threadId"] for t in listed["threads"]] == [first["threadId"]]
    assert listed["threads"][0]["title"] == "one"  # a thread is named by its first prompt
    history = await lsp.request("invincat/threads/history", {"threadId": first["threadId"]})
    assert [(m["role"], m["content"]) for m in history["messages"]] == [
        ("user", "one"),
        ("assistant", "first"),
        ("user", "two"),
        ("assistant", "second answer"),
    ]


async def test_initialize_is_answered_before_the_langchain_stack_is_imported(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    # The process of a first editor window (later ones are forked by the warm server with
    # the stack imported: tests/lsp/test_warm_stdio.py).
    lsp = await start_client({**invincat_env, "INVINCAT_WARM": "0"}, workspace, editor)
    try:
        status = await lsp.request("invincat/debug/status")
        # Recorded by the initialize handler itself: nothing imported LangChain by then.
        assert status["stackLoadedAtInitialize"] is False
        fake_openai.add_steps([{"content": "ok"}])
        await lsp.turn_end((await lsp.chat("hi"))["turnId"])
        status = await lsp.request("invincat/debug/status")
        assert status["stackLoaded"] is True and status["sessionOpen"] is True
    finally:
        await stop_client(lsp)


async def test_a_missing_model_configuration_keeps_the_server_running_and_explains(
    invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    env = {k: v for k, v in invincat_env.items() if k != "OPENAI_API_KEY"}
    client = await start_client(env, workspace, editor)
    try:
        error = None
        try:
            await client.chat("hi")
        except Exception as exc:
            error = exc
        assert error is not None and getattr(error, "code", None) == -32010
        assert "OPENAI_API_KEY is not set" in str(error)
        [shown] = [m for m in client.messages if m.type == types.MessageType.Error]
        assert shown.message.startswith("Invincat: OPENAI_API_KEY is not set")
        status = await client.request("invincat/debug/status")
        assert status["sessionOpen"] is False and "OPENAI_API_KEY" in status["error"]
    finally:
        await stop_client(client)


async def test_the_tcp_transport_serves_the_same_protocol(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    client, server = await start_tcp_client(invincat_env, workspace, editor)
    try:
        fake_openai.add_steps([{"content": "over tcp"}])
        ref = await client.chat("hi", wait=True)
        assert ref["status"] == "completed"
        deltas = [e["text"] for e in client.turn_events(ref["turnId"]) if "text" in e]
        assert "".join(deltas) == "over tcp"
    finally:
        await stop_client(client)
        assert await asyncio.wait_for(server.wait(), DEADLINE) == 0
