"""`invincat/threads/list` and `invincat/threads/history`: saved conversations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from invincat_server.lsp.errors import request_handler
from invincat_server.lsp.protocol import (
    THREADS_HISTORY,
    THREADS_LIST,
    ThreadsHistoryParams,
    ThreadsHistoryResult,
    ThreadsListParams,
    ThreadsListResult,
    parse_params,
)

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer


@request_handler(THREADS_LIST)
async def invincat_threads_list(ls: InvincatLanguageServer, params: Any) -> ThreadsListResult:
    request = parse_params(ThreadsListParams, params, THREADS_LIST)
    session = await ls.host.require()
    threads = await session.threads(all_workspaces=request.all_workspaces)
    return {
        "threads": [
            {
                "threadId": t.thread_id,
                "title": t.title,
                "workspace": t.workspace,
                "createdAt": t.created_at,
                "updatedAt": t.updated_at,
            }
            for t in threads
        ]
    }


@request_handler(THREADS_HISTORY)
async def invincat_threads_history(ls: InvincatLanguageServer, params: Any) -> ThreadsHistoryResult:
    request = parse_params(ThreadsHistoryParams, params, THREADS_HISTORY)
    session = await ls.host.require()
    return {"threadId": request.thread_id, "messages": await session.history(request.thread_id)}
