"""`invincat/remote/list`, `invincat/remote/approve`, `invincat/remote/cancel`: runs of
Invincat's worker agent on configured LangGraph deployments (docs/remote.md).

Only translation: the deployments, the listing, the decisions and the cancelling are
runtime/remote/runs.py's, as for `invincat remote …`. Routed by `folder` (its project's
`.invincat/subagents.json` counts too), else the first folder's; needs the project's
settings only, never its agent stack."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from invincat_server.lsp.errors import request_handler, rpc_error
from invincat_server.lsp.protocol import (
    REMOTE_APPROVE,
    REMOTE_CANCEL,
    REMOTE_LIST,
    ErrorCode,
    RemoteApproveParams,
    RemoteApproveResult,
    RemoteCancelParams,
    RemoteCancelResult,
    RemoteListParams,
    RemoteListResult,
    parse_params,
)

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer
    from invincat_server.runtime.remote.runs import RemoteRuns

log = logging.getLogger(__name__)
R = TypeVar("R")

_CODES = {
    "unknown_deployment": ErrorCode.INVALID_PARAMS,
    "not_found": ErrorCode.UNKNOWN_THREAD,
    "not_pending": ErrorCode.REFUSED,
    "refused": ErrorCode.REMOTE_UNAVAILABLE,
    "unreachable": ErrorCode.REMOTE_UNAVAILABLE,
}


async def _with_runs(
    ls: InvincatLanguageServer,
    folder: str | None,
    method: str,
    body: Callable[[RemoteRuns], Awaitable[R]],
) -> R:
    from invincat_server.runtime.remote.runs import RemoteError, RemoteRuns

    host = ls.projects.for_folder(folder, method)
    await host.project_data()  # the settings; a JSON-RPC error if they cannot be read
    assert host.settings is not None
    runs = RemoteRuns.load(host.settings.home, host.root, lambda m: log.warning("%s", m))
    try:
        return await body(runs)
    except RemoteError as exc:
        raise rpc_error(_CODES[exc.kind], str(exc)) from None
    finally:
        await runs.aclose()


@request_handler(REMOTE_LIST)
async def invincat_remote_list(ls: InvincatLanguageServer, params: Any) -> RemoteListResult:
    request = parse_params(RemoteListParams, params, REMOTE_LIST)

    async def body(runs: RemoteRuns) -> RemoteListResult:
        listing = (await runs.pending(request.deployment)).to_json()
        return {"pending": listing["pending"], "skipped": listing["skipped"]}

    return await _with_runs(ls, request.folder, REMOTE_LIST, body)


@request_handler(REMOTE_APPROVE)
async def invincat_remote_approve(ls: InvincatLanguageServer, params: Any) -> RemoteApproveResult:
    request = parse_params(RemoteApproveParams, params, REMOTE_APPROVE)
    request.check(REMOTE_APPROVE)

    async def body(runs: RemoteRuns) -> RemoteApproveResult:
        done = await runs.decide(
            request.thread_id,
            reject=request.reject,
            message=request.message,
            deployment=request.deployment,
        )
        return {
            "deployment": done["deployment"],
            "thread_id": done["thread_id"],
            "run_id": done["run_id"],
            "decision": done["decision"],
            "calls": list(done["calls"]),
        }

    return await _with_runs(ls, request.folder, REMOTE_APPROVE, body)


@request_handler(REMOTE_CANCEL)
async def invincat_remote_cancel(ls: InvincatLanguageServer, params: Any) -> RemoteCancelResult:
    request = parse_params(RemoteCancelParams, params, REMOTE_CANCEL)
    request.check(REMOTE_CANCEL)

    async def body(runs: RemoteRuns) -> RemoteCancelResult:
        done = await runs.cancel(request.thread_id, request.deployment)
        return {
            "deployment": done["deployment"],
            "thread_id": done["thread_id"],
            "cancelled": list(done["cancelled"]),
        }

    return await _with_runs(ls, request.folder, REMOTE_CANCEL, body)
