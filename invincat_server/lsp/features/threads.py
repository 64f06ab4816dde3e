"""`invincat/threads/list`, `history`, `delete` and `prune`: saved conversations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from invincat_server.lsp.errors import request_handler
from invincat_server.lsp.protocol import (
    THREADS_DELETE,
    THREADS_HISTORY,
    THREADS_LIST,
    THREADS_PRUNE,
    ThreadInfo,
    ThreadsDeleteParams,
    ThreadsDeleteResult,
    ThreadsHistoryParams,
    ThreadsHistoryResult,
    ThreadsListParams,
    ThreadsListResult,
    ThreadsPruneParams,
    ThreadsPruneResult,
    parse_params,
)

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer


@request_handler(THREADS_LIST)
async def invincat_threads_list(ls: InvincatLanguageServer, params: Any) -> ThreadsListResult:
    request = parse_params(ThreadsListParams, params, THREADS_LIST)
    session = await ls.host.require()
    threads = await session.threads(all_workspaces=request.all_workspaces)
    return {"threads": [_thread_info(t) for t in threads]}


def _thread_info(t: Any) -> ThreadInfo:
    return {
        "threadId": t.thread_id,
        "title": t.title,
        "workspace": t.workspace,
        "createdAt": t.created_at,
        "updatedAt": t.updated_at,
    }


@request_handler(THREADS_HISTORY)
async def invincat_threads_history(ls: InvincatLanguageServer, params: Any) -> ThreadsHistoryResult:
    request = parse_params(ThreadsHistoryParams, params, THREADS_HISTORY)
    session = await ls.host.require()
    return {"threadId": request.thread_id, "messages": await session.history(request.thread_id)}


@request_handler(THREADS_DELETE)
async def invincat_threads_delete(ls: InvincatLanguageServer, params: Any) -> ThreadsDeleteResult:
    request = parse_params(ThreadsDeleteParams, params, THREADS_DELETE)
    session = await ls.host.require()
    await session.delete_thread(request.thread_id, discard_pending=request.discard_pending)
    return {"threadId": request.thread_id, "deleted": True}


@request_handler(THREADS_PRUNE)
async def invincat_threads_prune(ls: InvincatLanguageServer, params: Any) -> ThreadsPruneResult:
    request = parse_params(ThreadsPruneParams, params, THREADS_PRUNE)
    session = await ls.host.require()
    deleted, kept = await session.prune_threads(
        request.older_than_days,
        discard_pending=request.discard_pending,
        dry_run=request.dry_run,
    )
    return {
        "deleted": [_thread_info(t) for t in deleted],
        "kept": [{"thread": _thread_info(t), "reason": reason} for t, reason in kept],
    }
