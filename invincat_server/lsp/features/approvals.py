"""`invincat/resolveApproval`, the `invincat.resolveApproval` command, and
`invincat/pendingApprovals`.

The request (from a panel) and the command (from a code action) share one path: the first
decision for an approval wins (the Session enforces it, across processes too) and every
later one answers `{resolved: false, reason}`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from pygls.lsp.server import LanguageServer

from invincat_server.lsp.errors import request_handler
from invincat_server.lsp.protocol import (
    PENDING_APPROVALS,
    RESOLVE_APPROVAL,
    RESOLVE_APPROVAL_COMMAND,
    PendingApprovalsParams,
    PendingApprovalsResult,
    ResolveApprovalParams,
    ResolveResult,
    parse_params,
)

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer


async def _resolve(ls: InvincatLanguageServer, params: Any, method: str) -> ResolveResult:
    request = parse_params(ResolveApprovalParams, params, method)
    session = await ls.host.require()
    result = await session.resolve(request.approval_id, request.runtime_decision())
    if result.resolved:
        # A decision that completes no batch yet (after a restart) emits no event.
        ls.proposals.remove(request.approval_id)
    return cast(ResolveResult, result.to_json_dict())


@request_handler(RESOLVE_APPROVAL)
async def invincat_resolve_approval(ls: InvincatLanguageServer, params: Any) -> ResolveResult:
    return await _resolve(ls, params, RESOLVE_APPROVAL)


@request_handler(RESOLVE_APPROVAL_COMMAND)
async def invincat_resolve_approval_command(ls: LanguageServer, *arguments: Any) -> ResolveResult:
    """`workspace/executeCommand` `invincat.resolveApproval` with one argument: the same
    object `invincat/resolveApproval` takes."""
    # Annotated with pygls' class: pygls resolves the command's type hints at run time.
    params = arguments[0] if len(arguments) == 1 else list(arguments)
    return await _resolve(cast("InvincatLanguageServer", ls), params, RESOLVE_APPROVAL_COMMAND)


@request_handler(PENDING_APPROVALS)
async def invincat_pending_approvals(
    ls: InvincatLanguageServer, params: Any
) -> PendingApprovalsResult:
    request = parse_params(PendingApprovalsParams, params, PENDING_APPROVALS)
    session = await ls.host.require()
    if request.thread_id is not None:
        thread_ids = [request.thread_id]
    else:
        # Only this workspace's threads: a resumed turn runs in this workspace's root.
        thread_ids = [t.thread_id for t in await session.threads(all_workspaces=False)]
    approvals = [
        approval.to_json_dict()
        for thread_id in thread_ids
        for approval in await session.pending_approvals(thread_id)
    ]
    for approval in approvals:
        ls.proposals.add(approval)
    return {"approvals": approvals}
