"""Manual offload: move the older part of a thread out of the model's context into a file.

The offloaded messages are appended, redacted, to `<project>/.invincat/offload/<thread>.md`
(readable, and readable by the agent with `read_file` if it needs details later). The
thread's compaction record then cuts them from every model request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from langchain_core.messages import AnyMessage

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
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    body = redact(transcript(messages))
    header = "" if path.exists() else f"# Offloaded conversation of thread {thread_id}\n\n"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"{header}---\n\n_Offloaded {stamp}, {len(messages)} messages._\n\n{body}\n\n")
