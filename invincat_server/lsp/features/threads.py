"""`invincat/threads/list`, `history`, `delete` and `prune`: saved conversations.

`list` and `history` answer while the session is still opening, from the workspace's
project data (runtime/project_data.py: no agent stack); once it is open, through it.
`delete` and `prune` wait for the session (they must see its running turns)."""

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
    session = ls.host.session
    if session is not None:  # its open connection: no file to open per request
        threads = await session.threads(all_workspaces=request.all_workspaces)
    else:  # still opening (or cannot open): read the file without the agent stack
        project = await ls.host.project_data()
        threads = await project.threads(all_workspaces=request.all_workspaces)
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
    messages = None
    if ls.host.session is None:  # still opening: decode the checkpoint without the stack
        project = await ls.host.project_data()
        messages = await project.history(request.thread_id)
    if messages is None:  # open, or a checkpoint only LangGraph can decode
        session = await ls.host.require()
        messages = await session.history(request.thread_id)
    return {"threadId": request.thread_id, "messages": messages}


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
