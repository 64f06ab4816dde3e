"""Manual offload: move the older part of a thread out of the model's context into a file.

The offloaded messages are appended, redacted, to `<project>/.invincat/offload/<thread>.md`
(readable, and readable by the agent with `read_file` if it needs details later). The
thread's compaction record then cuts them from every model request.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import AnyMessage

from invincat_server.runtime import private_files
from invincat_server.runtime.context.transcript import transcript
from invincat_server.runtime.data_dir import ensure_data_dir


def offload_path(project_root: Path, thread_id: str) -> Path:
    return project_root / ".invincat" / "offload" / f"{thread_id}.md"


def append_offload(
    path: Path,
    messages: Sequence[AnyMessage],
    *,
    thread_id: str,
    redact: Callable[[str], str],
) -> None:
    """Append the full messages (tool outputs included) as a dated, redacted section."""
    ensure_data_dir(path.parent.parent)  # .invincat/: its .gitignore keeps offload/ private
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    body = redact(transcript(messages))
    # 0600 in 0700 folders, no link followed below the project root (private_files.py):
    # a transcript is a whole conversation, and a repository must not redirect it.
    fd = private_files.open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        new = os.fstat(fd).st_size == 0
        header = f"# Offloaded conversation of thread {thread_id}\n\n" if new else ""
        fh.write(f"{header}---\n\n_Offloaded {stamp}, {len(messages)} messages._\n\n{body}\n\n")


async def offload_thread(
    graph: Any, context: Any, project_root: Path, shown: str, thread_id: str
) -> dict[str, Any]:
    """Move all but the latest turn of `thread_id` (main agent `graph`, its context
    middleware `context`) into its offload file; returns a compaction report. `shown` is
    the file's name as the model should read it."""
    from invincat_server.runtime.agent_stack import AgentStack
    from invincat_server.runtime.memory.redaction import redact_text

    config = AgentStack.config(thread_id)
    state = await graph.aget_state(config)
    messages = state.values.get("messages", [])
    compaction = state.values.get("compaction")
    path = offload_path(project_root, thread_id)
    record = await context.compact(
        messages,
        compaction,
        reason="offload",
        keep_tokens=0,
        summarize=False,
        note=f"The full earlier conversation is in {shown}; read it if you need details.",
    )
    if record is None:
        tokens = context.estimate(messages)
        return {
            "threadId": thread_id,
            "offloadedMessages": 0,
            "file": None,
            "tokensBefore": tokens,
            "tokensAfter": tokens,
        }
    ids = [m.id for m in messages]
    start = ids.index(compaction["cut_id"]) if compaction and compaction.get("cut_id") in ids else 0
    moved = messages[start : record["messages_cut"]]
    append_offload(path, moved, thread_id=thread_id, redact=redact_text)
    await graph.aupdate_state(config, {"compaction": record})
    return {
        "threadId": thread_id,
        "offloadedMessages": len(moved),
        "file": str(path),
        "tokensBefore": record["tokens_before"],
        "tokensAfter": record["tokens_after"],
    }
