"""The light checkpoint reader: LangGraph's own encoding of real LangChain messages decodes
to the same history, without importing a class; anything else is left to the stack."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from invincat_server.runtime.checkpoint_reader import latest_messages
from invincat_server.runtime.history import fields_to_dicts, messages_to_dicts


def _write(db: Path, thread: str, kind: str, blob: bytes, checkpoint_id: str = "1") -> None:
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS checkpoints (thread_id TEXT, checkpoint_ns TEXT, "
        "checkpoint_id TEXT, type TEXT, checkpoint BLOB)"
    )
    conn.execute(
        "INSERT INTO checkpoints VALUES (?, '', ?, ?, ?)", (thread, checkpoint_id, kind, blob)
    )
    conn.commit()
    conn.close()


def test_langgraphs_encoding_of_messages_reads_back_as_the_same_history(tmp_path: Path) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from invincat_server.runtime.tool_outcome import declined

    messages = [
        HumanMessage(content="read it"),
        AIMessage(
            content=[{"type": "text", "text": "Reading."}],
            tool_calls=[{"id": "c1", "name": "read_file", "args": {"path": "a.txt"}}],
        ),
        ToolMessage(content="alpha", tool_call_id="c1", name="read_file"),
        declined("no", tool_call_id="c2", name="execute"),
        AIMessage(content="It says alpha."),
    ]
    kind, blob = JsonPlusSerializer().dumps_typed(
        {"v": 4, "id": "1", "channel_values": {"messages": messages}}
    )
    db = tmp_path / "threads.sqlite"
    _write(db, "t_1", kind, blob)
    _write(db, "t_1", kind, JsonPlusSerializer().dumps_typed({"channel_values": {}})[1], "0")

    fields = latest_messages(db, "t_1")
    assert fields is not None
    assert fields_to_dicts(fields) == messages_to_dicts(messages)
    assert [m["status"] for m in fields_to_dicts(fields) if m["role"] == "tool"] == [
        "success",
        "rejected",
    ]


def test_no_file_no_table_or_no_checkpoint_is_an_empty_history(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    assert latest_messages(db, "t_1") == []
    sqlite3.connect(db).close()
    assert latest_messages(db, "t_1") == []
    _write(db, "t_other", "null", b"")
    assert latest_messages(db, "t_1") == []


def test_an_encoding_it_does_not_know_is_left_to_the_agent_stack(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    _write(db, "t_1", "pickle", b"\x80\x04N.")
    assert latest_messages(db, "t_1") is None
    _write(db, "t_2", "msgpack", b"\xc1")  # not msgpack at all
    assert latest_messages(db, "t_2") is None
