"""The light reads of the PostgreSQL backend: the thread list, the approvals still
pending, and a thread's latest messages, without the agent stack.

What runtime/records.py's `read_saved` and runtime/checkpoint_reader.py's
`latest_messages` read from threads.sqlite, read here in one short synchronous
connection each (callers run them in a worker thread, as they do the SQLite ones). No
LangGraph: the `messages` channel is a row of LangGraph's `checkpoint_blobs`, found
through the latest checkpoint's `channel_versions`, and decoded by checkpoint_reader.
Tables that do not exist yet (no turn ever ran on this database) read as nothing saved.
"""

from __future__ import annotations

from typing import Any

from invincat_server.runtime import database
from invincat_server.runtime.checkpoint_reader import decode, message_fields
from invincat_server.runtime.pg_records import (
    APPROVAL_COLUMNS,
    THREAD_COLUMNS,
    approval_records,
    storable,
)
from invincat_server.runtime.records import ApprovalRecord, ThreadInfo

_LATEST_MESSAGES = """
SELECT b.type, b.blob, c.checkpoint -> 'channel_versions' ? 'messages'
FROM checkpoints c
LEFT JOIN checkpoint_blobs b
  ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
 AND b.channel = 'messages' AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages'
WHERE c.thread_id = %s AND c.checkpoint_ns = ''
ORDER BY c.checkpoint_id DESC LIMIT 1
"""


def records_exist(url: str) -> bool:
    """Whether Invincat's thread table exists in the database (anything was ever saved)."""
    with database.connect(url) as conn:
        row = conn.execute("SELECT to_regclass('invincat_threads') IS NOT NULL").fetchone()
    return bool(row and row[0])


def read_saved(
    url: str, workspace: str | None = None
) -> tuple[list[ThreadInfo], list[ApprovalRecord]]:
    """(threads newest first, only `workspace`'s when given; approvals still pending), as
    records.read_saved gives them from threads.sqlite."""
    if not storable(workspace):
        return [], []  # no folder's name holds a NUL
    with database.connect(url) as conn:
        exists = conn.execute("SELECT to_regclass('invincat_threads') IS NOT NULL").fetchone()
        if not (exists and exists[0]):
            return [], []
        query = f"SELECT {THREAD_COLUMNS} FROM invincat_threads"
        params: tuple[str, ...] = ()
        if workspace is not None:
            query += " WHERE workspace = %s"
            params = (workspace,)
        threads = [
            ThreadInfo(*row)
            for row in conn.execute(query + " ORDER BY updated_at DESC, seq DESC", params)
        ]
        pending = approval_records(
            conn.execute(
                f"SELECT {APPROVAL_COLUMNS} FROM invincat_approvals WHERE status = 'pending' "
                "ORDER BY seq"
            )
        )
    return threads, pending


def latest_messages(url: str, thread_key: str) -> list[dict[str, Any]] | None:
    """The `messages` of the latest checkpoint of `thread_key` (root namespace) as field
    dicts; [] when the thread has none yet; None when they cannot be decoded here."""
    if not storable(thread_key):
        return []
    with database.connect(url) as conn:
        exists = conn.execute(
            "SELECT to_regclass('checkpoints') IS NOT NULL "
            "AND to_regclass('checkpoint_blobs') IS NOT NULL"
        ).fetchone()
        if not (exists and exists[0]):
            return []
        row = conn.execute(_LATEST_MESSAGES, (thread_key,)).fetchone()
    if row is None:
        return []
    kind, blob, versioned = row
    if not versioned:
        return []  # a checkpoint before the first message
    if kind is None:
        return None  # its blob went missing: the stack's reader says what is there
    if kind == "empty":
        return []
    return message_fields(decode(str(kind), bytes(blob or b"")))
