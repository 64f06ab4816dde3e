"""`session/list` (codecompanion's `/resume`): the saved threads of a folder's project,
newest first, a page at a time, read through the core Project's light reads
(`project.data.threads`, as `invincat threads list` and the language server read them):
no runtime Session, no agent stack.

The cursor is opaque to clients; it is the offset of the next page's first thread. A
cursor this agent did not make is a -32602 error, not an empty page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from acp import RequestError
from acp.schema import ListSessionsResponse, SessionInfo
from pydantic import ValidationError

from invincat_server.acp.base import log

if TYPE_CHECKING:
    from invincat_server.runtime.project import Projects
    from invincat_server.runtime.records import ThreadInfo

PAGE_SIZE = 50
INVALID_PARAMS = -32602


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isascii() or not cursor.isdigit() or len(cursor) > 9:
        raise RequestError(
            INVALID_PARAMS,
            "Unknown cursor; pass the nextCursor of the previous session/list answer.",
        )
    return int(cursor)


def _is_folder(cwd: str) -> bool:
    """An absolute path to a directory (a NUL byte or a name too long for the system is
    not: `is_dir` raises on those instead of answering)."""
    if "\x00" in cwd or not Path(cwd).is_absolute():
        return False
    try:
        return Path(cwd).is_dir()
    except OSError:
        return False


def _here() -> Path:
    """Where this process runs: without `cwd` every project's threads are listed, and
    any Project reads them (one threads file); a deleted working folder is no error."""
    try:
        return Path.cwd()
    except OSError:
        return Path(os.sep)


async def _threads(projects: Projects, cwd: str | None) -> list[ThreadInfo]:
    from invincat_server.runtime.config import ConfigError

    try:
        # The Project a session opened in `cwd` uses (the same root its threads are
        # recorded under); shared with the sessions open on it, let go once read.
        project = projects.open(Path(cwd) if cwd is not None else _here())
    except ConfigError as exc:
        raise RequestError(-32000, str(exc)) from None
    try:
        return await project.data.threads(all_workspaces=cwd is None)
    finally:
        await projects.release(project, followup_timeout=5.0)


async def list_sessions(
    projects: Projects, cwd: str | None, cursor: str | None
) -> ListSessionsResponse:
    start = _offset(cursor)
    if cwd is not None and not _is_folder(cwd):
        raise RequestError(
            INVALID_PARAMS, f"cwd must be an absolute path to a directory, got {cwd!r:.200}."
        )
    threads = await _threads(projects, cwd)
    page = threads[start : start + PAGE_SIZE]
    more = start + PAGE_SIZE < len(threads)
    return ListSessionsResponse(
        sessions=[info for thread in page if (info := _session_info(thread)) is not None],
        next_cursor=str(start + PAGE_SIZE) if more else None,
    )


def _session_info(thread: ThreadInfo) -> SessionInfo | None:
    """The thread as the schema's SessionInfo; None for a row the schema refuses (a
    hand-edited threads file: bytes that are no text for an id), which costs that thread
    only, not the whole list."""
    try:
        return SessionInfo(
            session_id=thread.thread_id,
            cwd=thread.workspace,
            title=thread.title or None,
            updated_at=thread.updated_at,
        )
    except ValidationError as exc:
        log.warning("session/list: thread %.80r left out: %s", thread.thread_id, exc)
        return None
