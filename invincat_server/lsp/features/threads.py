"""`invincat/threads/list`, `history`, `delete` and `prune`: saved conversations.

`list` and `history` answer while the session is still opening, from the workspace's
project data (runtime/project_data.py: no agent stack); once it is open, through it.
`delete` and `prune` wait for the session (they must see its running turns).

Threads live in one per-user store and each records its project (`workspace`): `list`
shows every open project's threads (or `folder`'s), and `history` / `delete` go to the
project a thread belongs to (the first folder's when it is not open)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from invincat_server.lsp.errors import request_handler
from invincat_server.lsp.foreground import foreground
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
    from invincat_server.lsp.host import SessionHost
    from invincat_server.lsp.server import InvincatLanguageServer


@request_handler(THREADS_LIST)
@foreground
async def invincat_threads_list(ls: InvincatLanguageServer, params: Any) -> ThreadsListResult:
    request = parse_params(ThreadsListParams, params, THREADS_LIST)
    if request.folder is not None:
        host = ls.projects.for_folder(request.folder, THREADS_LIST)
        threads = await _threads(host, all_workspaces=request.all_workspaces)
    else:
        # One read of the per-user store, newest first, kept to the open projects.
        threads = await _threads(ls.projects.first(), all_workspaces=True)
        if not request.all_workspaces:
            open_roots = {str(host.root) for host in ls.projects.ordered()}
            threads = [t for t in threads if t.workspace in open_roots]
    return {"threads": [_thread_info(t) for t in threads]}


async def _threads(host: SessionHost, *, all_workspaces: bool) -> list[Any]:
    session = host.session
    if session is not None:  # its open connection: no file to open per request
        return await session.threads(all_workspaces=all_workspaces)
    # Still opening (or cannot open): read the file without the agent stack.
    project = await host.project_data()
    return await project.threads(all_workspaces=all_workspaces)


def _thread_info(t: Any) -> ThreadInfo:
    return {
        "threadId": t.thread_id,
        "title": t.title,
        "workspace": t.workspace,
        "createdAt": t.created_at,
        "updatedAt": t.updated_at,
    }


@request_handler(THREADS_HISTORY)
@foreground
async def invincat_threads_history(ls: InvincatLanguageServer, params: Any) -> ThreadsHistoryResult:
    request = parse_params(ThreadsHistoryParams, params, THREADS_HISTORY)
    _info, owner = await ls.projects.thread(request.thread_id)
    host = owner or ls.projects.first()  # the store is per user: any project reads it
    messages = None
    if host.session is None:  # still opening: decode the checkpoint without the stack
        project = await host.project_data()
        messages = await project.history(request.thread_id)
    if messages is None:  # open, or a checkpoint only LangGraph can decode
        session = await host.require()
        messages = await session.history(request.thread_id)
    return {"threadId": request.thread_id, "messages": messages}


@request_handler(THREADS_DELETE)
async def invincat_threads_delete(ls: InvincatLanguageServer, params: Any) -> ThreadsDeleteResult:
    request = parse_params(ThreadsDeleteParams, params, THREADS_DELETE)
    _info, owner = await ls.projects.thread(request.thread_id)
    session = await (owner or ls.projects.first()).require()
    await session.delete_thread(request.thread_id, discard_pending=request.discard_pending)
    return {"threadId": request.thread_id, "deleted": True}


@request_handler(THREADS_PRUNE)
async def invincat_threads_prune(ls: InvincatLanguageServer, params: Any) -> ThreadsPruneResult:
    request = parse_params(ThreadsPruneParams, params, THREADS_PRUNE)
    session = await ls.projects.first().require()
    deleted, kept = await session.prune_threads(
        request.older_than_days,
        discard_pending=request.discard_pending,
        dry_run=request.dry_run,
    )
    return {
        "deleted": [_thread_info(t) for t in deleted],
        "kept": [{"thread": _thread_info(t), "reason": reason} for t, reason in kept],
    }
