"""`session/list` (codecompanion's `/resume`): the saved threads of a folder's project,
newest first, a page at a time, read without opening a runtime Session (no agent stack).

The cursor is opaque to clients; it is the offset of the next page's first thread. A
cursor this agent did not make is a -32602 error, not an empty page."""

from __future__ import annotations

from pathlib import Path

from acp import RequestError
from acp.schema import ListSessionsResponse, SessionInfo

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


async def list_sessions(cwd: str | None, cursor: str | None) -> ListSessionsResponse:
    from invincat_server.runtime.config import ConfigError, find_project_root, load_settings
    from invincat_server.runtime.policy.workspace import Workspace
    from invincat_server.runtime.records import saved_threads

    start = _offset(cursor)
    workspace: str | None = None
    if cwd is not None:
        if not _is_folder(cwd):
            raise RequestError(
                INVALID_PARAMS, f"cwd must be an absolute path to a directory, got {cwd!r:.200}."
            )
        # The same root a session opened in `cwd` records its threads under.
        workspace = str(Workspace(find_project_root(Path(cwd))).root)
    try:
        settings = load_settings()
    except ConfigError as exc:
        raise RequestError(-32000, str(exc)) from None
    threads = await saved_threads(settings.threads_db, workspace)
    page = threads[start : start + PAGE_SIZE]
    more = start + PAGE_SIZE < len(threads)
    return ListSessionsResponse(
        sessions=[
            SessionInfo(
                session_id=thread.thread_id,
                cwd=thread.workspace,
                title=thread.title or None,
                updated_at=thread.updated_at,
            )
            for thread in page
        ],
        next_cursor=str(start + PAGE_SIZE) if more else None,
    )
