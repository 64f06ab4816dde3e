"""A thread's messages read from its latest checkpoint without LangGraph or LangChain.

`threads/history` must answer while the agent stack (seconds of imports) is still
loading. Decoding a checkpoint with LangGraph's own serializer imports `langchain_core`
and `langgraph` (measured: ~0.7 s on a quiet 2-core machine), and then rebuilds every
message as a LangChain object that `runtime/history.py` turns straight back into plain
data. The checkpoint is msgpack (`ormsgpack`, ~0.08 s to import); LangGraph encodes a
pydantic object (every LangChain message) as an extension holding (module, class name,
`model_dump()`, …). This reader keeps the `model_dump()` dict and builds no class at
all, which is also the safe direction: nothing named in the file is imported.

Only the encoding LangGraph writes today ("msgpack") is read. Anything else (an older
"json" checkpoint, a pickle, an extension this reader does not know) returns None, and
the caller falls back to the agent stack's reader: slower, never wrong.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

# LangGraph's msgpack extension codes (langgraph/checkpoint/serde/jsonplus.py).
_CONSTRUCTOR_CODES = (0, 1, 2, 3)  # (module, name, args[, method])
_PYDANTIC_CODES = (4, 5)  # (module, name, fields dict[, method])
_DELTA_SNAPSHOT = 7


class UnreadableCheckpoint(Exception):
    """The checkpoint uses an encoding this light reader does not decode."""


def latest_messages(db: Path, thread_key: str) -> list[dict[str, Any]] | None:
    """The `messages` of the latest checkpoint of `thread_key` (root namespace), each as
    its fields (`type`, `content`, `tool_calls`, …); [] when the thread has no checkpoint
    yet; None when the checkpoint cannot be decoded here (ask the agent stack)."""
    row = _latest_row(db, thread_key)
    if row is None:
        return []
    kind, blob = row
    checkpoint = decode(kind, blob)
    values = checkpoint.get("channel_values") if isinstance(checkpoint, dict) else None
    if checkpoint is None or not isinstance(values or {}, dict):
        return None
    return message_fields((values or {}).get("messages", []))


def decode(kind: str, blob: bytes) -> Any:
    """A checkpoint value LangGraph's serializer wrote as (`kind`, `blob`), as plain data;
    None when this reader does not decode it. Also what runtime/pg_reads.py reads the
    `messages` blob of PostgreSQL's saver with."""
    if kind != "msgpack":
        return None
    try:
        return _unpack(blob)
    except Exception:  # UnreadableCheckpoint, or msgpack that is not what we expect
        return None


def message_fields(messages: Any) -> list[dict[str, Any]] | None:
    """`messages` if it is a list of message field dicts, else None (ask the stack)."""
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return None
    return messages


def _latest_row(db: Path, thread_key: str) -> tuple[str, bytes] | None:
    if not db.exists():
        return None
    # Read-only, its own short-lived connection: the session (or another process) may
    # be writing; WAL lets this read a consistent snapshot meanwhile.
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        row = conn.execute(
            "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
            "ORDER BY checkpoint_id DESC LIMIT 1",
            (thread_key,),
        ).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None  # no turn has run in this file yet
        raise
    finally:
        conn.close()
    return (str(row[0]), bytes(row[1])) if row else None


def _unpack(data: bytes) -> Any:
    import ormsgpack

    return ormsgpack.unpackb(data, ext_hook=_ext_hook, option=ormsgpack.OPT_NON_STR_KEYS)


def _ext_hook(code: int, data: bytes) -> Any:
    if code == _DELTA_SNAPSHOT:
        return _unpack(data)
    if code in _PYDANTIC_CODES:
        fields = _unpack(data)[2]
        if not isinstance(fields, dict):
            raise UnreadableCheckpoint(f"pydantic extension without fields ({code})")
        return fields
    if code in _CONSTRUCTOR_CODES:
        return _unpack(data)[2]  # the constructor's argument(s), as data
    raise UnreadableCheckpoint(f"msgpack extension {code}")
