"""`invincat/resolveApproval`, the `invincat.resolveApproval` command, and
`invincat/pendingApprovals`.

The request (from a panel) and the command (from a code action) share one path: the first
decision for an approval wins (the Session enforces it, across processes too) and every
later one answers `{resolved: false, reason}`. Approving an edit of an open document is
answered only once its `workspace/applyEdit` has been sent (see `lsp/deliveries.py`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from pygls.lsp.server import LanguageServer

from invincat_server.lsp.errors import request_handler
from invincat_server.lsp.foreground import foreground
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
    from invincat_server.lsp.deliveries import Delivery
    from invincat_server.lsp.host import SessionHost
    from invincat_server.lsp.proposals import Proposal
    from invincat_server.lsp.server import InvincatLanguageServer
    from invincat_server.runtime.policy.decisions import Decision
    from invincat_server.runtime.session import Session

log = logging.getLogger("invincat.lsp.approvals")


async def _resolve(ls: InvincatLanguageServer, params: Any, method: str) -> ResolveResult:
    request = parse_params(ResolveApprovalParams, params, method)
    host = await ls.projects.for_approval(request.approval_id)
    session = await host.require()
    from invincat_server.runtime.policy.decisions import DecisionError  # pydantic: on use

    try:
        decision = request.runtime_decision()
    except DecisionError as exc:  # answered like any decision the Session refuses
        return {"resolved": False, "reason": str(exc)}
    # Looked up before resolving: the decision's event removes the proposal.
    proposal = ls.proposals.get(request.approval_id)
    delivery = _expect_edit(ls, proposal, decision)
    try:
        result = await session.resolve(request.approval_id, decision)
        if result.resolved:
            # A decision that completes no batch yet (after a restart) emits no event.
            ls.proposals.remove(request.approval_id)
        if proposal is not None and delivery is not None and result.resolved:
            if result.turn is not None:  # resumed after a restart: a new turn runs it
                delivery.turn_id = result.turn.turn_id
            await _until_sent(ls, session, proposal.thread_id, delivery)
    finally:
        if delivery is not None:
            ls.documents.deliveries.forget(delivery)
    return cast(ResolveResult, result.to_json_dict())


def _expect_edit(
    ls: InvincatLanguageServer, proposal: Proposal | None, decision: Decision
) -> Delivery | None:
    """An approved edit of a document open in the editor will be sent as
    `workspace/applyEdit`: watch for it. Registered before resolving, because the tool
    may run before `Session.resolve` returns."""
    if proposal is None or decision.rejects:
        return None
    if not ls.documents.edits_in_editor(proposal.path):
        return None
    return ls.documents.deliveries.expect(proposal.path, proposal.tool_call_id, proposal.turn_id)


async def _until_sent(
    ls: InvincatLanguageServer, session: Session, thread_id: str, delivery: Delivery
) -> None:
    """Hold the answer until the edit request is written to the editor, so a client that
    reads one message at a time sees the request first (docs/protocol.md, "Pending edits
    in the editor"). Not while the thread waits for other decisions of the same batch:
    the tool runs only once they are made."""
    if delivery.done.is_set():
        return
    try:
        if await session.pending_approvals(thread_id):
            return
    except Exception:
        # The decision is already made: failing its answer now would tell the client it
        # was not. Waiting (bounded) is the safe side.
        log.exception("could not list the thread's pending approvals")
    if not await ls.documents.deliveries.wait(delivery):
        log.warning("answered an approval before its edit was sent to the editor (timeout)")


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
@foreground
async def invincat_pending_approvals(
    ls: InvincatLanguageServer, params: Any
) -> PendingApprovalsResult:
    request = parse_params(PendingApprovalsParams, params, PENDING_APPROVALS)
    if request.folder is not None:
        hosts = [ls.projects.for_folder(request.folder, PENDING_APPROVALS)]
    elif request.thread_id is not None:  # the store is per user: ask the thread's project
        _info, owner = await ls.projects.thread(request.thread_id)
        hosts = [owner or ls.projects.first()]
    else:
        hosts = ls.projects.ordered() or [ls.projects.first()]
    approvals: list[dict[str, Any]] = []
    for host in hosts:
        found = await _pending(host, request.thread_id)
        for approval in found:
            ls.proposals.add(approval, root=host.root)
        approvals += found
    return {"approvals": approvals}


async def _pending(host: SessionHost, thread_id: str | None) -> list[dict[str, Any]]:
    """The approvals waiting in one project (of `thread_id` only, when given)."""
    session = host.session
    if session is None:
        # Still opening: the recorded approvals, read without the agent stack. (An
        # interrupt a crashed process checkpointed but never recorded shows up once the
        # session is open: it re-lists them as diagnostics.)
        project = await host.project_data()
        return await project.pending_approvals(thread_id)
    if thread_id is not None:
        thread_ids = [thread_id]
    else:
        # Only this project's threads: a resumed turn runs in this project's root.
        thread_ids = [t.thread_id for t in await session.threads(all_workspaces=False)]
    return [
        approval.to_json_dict()
        for tid in thread_ids
        for approval in await session.pending_approvals(tid)
    ]
