"""`invincat/memory/list`, `show`, `apply`, `log`, `revert` and `verify`: the editor's memory
views.

Thin over `MemoryService`, like `invincat memory …` in a terminal: every change goes
through governance and the journal (actor `user`: these are a person's edits from a
sidebar), and each one that changed a store is announced with
`invincat/memory/didChange`. The service is synchronous (file locks, fsync), so it runs in
a worker thread. Its refusals become JSON-RPC errors with its message, which says what to
do; a governance refusal of a batch is not an error but the report (`rejected`, `dropped`
with reasons), exactly as the memory agent gets it.

Each project has its own project store: requests go to `folder`'s project, else to the
first folder's (user memory is the same whichever).

The reads (`list`, `show`, `log`) first try the quick reader (runtime/memory/reader.py):
no pydantic, no MemoryService, so they answer as soon as the settings are read, without
waiting for the memory package to load nor for the agent stack (issue 15). Whenever it
cannot vouch for a store or journal (damage, a conflict, a problem the service already
reported), the service answers as before, with the same JSON. Cited entries stay on the
quick path: the reader runs the same staleness check (staleness.py, no pydantic).
`verify` always takes the service: it checks citations (citations.py, staleness.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from invincat_server.lsp.errors import request_handler, rpc_error
from invincat_server.lsp.foreground import foreground
from invincat_server.lsp.protocol import (
    MEMORY_APPLY,
    MEMORY_LIST,
    MEMORY_LOG,
    MEMORY_REVERT,
    MEMORY_SHOW,
    MEMORY_VERIFY,
    ErrorCode,
    MemoryApplyParams,
    MemoryListParams,
    MemoryListResult,
    MemoryLogParams,
    MemoryLogResult,
    MemoryRevertParams,
    MemoryShowParams,
    MemoryShowResult,
    MemoryVerifyParams,
    MemoryVerifyResult,
    parse_params,
)

if TYPE_CHECKING:
    from invincat_server.lsp.host import SessionHost
    from invincat_server.lsp.server import InvincatLanguageServer
    from invincat_server.runtime.memory import BatchReport
    from invincat_server.runtime.project import MemoryViews

R = TypeVar("R")

ACTOR = "user"

_CODES = {
    "unknown": ErrorCode.UNKNOWN_MEMORY,
    "invalid": ErrorCode.INVALID_PARAMS,
    "unavailable": ErrorCode.MEMORY_UNAVAILABLE,
}
"""The core's one memory error (runtime/project/memory_views.py) as JSON-RPC codes."""


async def _call(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """Run a memory view off the event loop; its refusals as JSON-RPC errors."""
    from invincat_server.runtime.project import MemoryViewError

    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except MemoryViewError as exc:
        raise rpc_error(_CODES[exc.kind], exc.message) from None


async def _views(ls: InvincatLanguageServer, host: SessionHost) -> MemoryViews:
    """`host`'s project's memory views, as soon as its settings are read (never waits for
    the agent stack); its stores watched before the read, so a change landing right
    after it is still announced."""
    await host.project_data()  # settings and the project root: tens of ms
    assert host.core is not None
    reader = host.core.data.memory_reader()
    if reader is not None:
        ls.memory_sync.watch(reader.files.values(), host.root)
    return host.core.memory_views


def _announce(ls: InvincatLanguageServer, host: SessionHost, report: BatchReport) -> dict[str, Any]:
    """didChange for a batch that changed its store; the report as JSON."""
    if report.changed or report.cleanup_batch_id:
        ids = [report.batch_id, report.cleanup_batch_id]
        ls.memory_sync.changed(report.scope, ids, host.root)
    return report.to_json()


@request_handler(MEMORY_LIST)
@foreground
async def invincat_memory_list(ls: InvincatLanguageServer, params: Any) -> MemoryListResult:
    request = parse_params(MemoryListParams, params, MEMORY_LIST)
    host = ls.projects.for_folder(request.folder, MEMORY_LIST)
    views = await _views(ls, host)
    result = await _call(
        views.list_view,
        request.scope,
        include_archived=request.include_archived,
        tier=request.tier,
    )
    return cast("MemoryListResult", result)


@request_handler(MEMORY_SHOW)
@foreground
async def invincat_memory_show(ls: InvincatLanguageServer, params: Any) -> MemoryShowResult:
    request = parse_params(MemoryShowParams, params, MEMORY_SHOW)
    host = ls.projects.for_folder(request.folder, MEMORY_SHOW)
    views = await _views(ls, host)
    view = await _call(
        views.show_view, request.id, how_to_list="`invincat/memory/list` with includeArchived"
    )
    return cast("MemoryShowResult", view)


@request_handler(MEMORY_APPLY)
async def invincat_memory_apply(ls: InvincatLanguageServer, params: Any) -> dict[str, Any]:
    request = parse_params(MemoryApplyParams, params, MEMORY_APPLY)
    request.check(MEMORY_APPLY)
    host = ls.projects.for_folder(request.folder, MEMORY_APPLY)
    views = await _views(ls, host)
    report = await _call(views.apply, request.scope, request.operations, actor=ACTOR)
    return _announce(ls, host, report)


@request_handler(MEMORY_LOG)
@foreground
async def invincat_memory_log(ls: InvincatLanguageServer, params: Any) -> MemoryLogResult:
    request = parse_params(MemoryLogParams, params, MEMORY_LOG)
    request.check(MEMORY_LOG)
    host = ls.projects.for_folder(request.folder, MEMORY_LOG)
    views = await _views(ls, host)
    records = await _call(views.log_view, request.scope, request.limit, request.author)
    return {"records": records}


@request_handler(MEMORY_REVERT)
async def invincat_memory_revert(ls: InvincatLanguageServer, params: Any) -> dict[str, Any]:
    request = parse_params(MemoryRevertParams, params, MEMORY_REVERT)
    host = ls.projects.for_folder(request.folder, MEMORY_REVERT)
    views = await _views(ls, host)
    return _announce(ls, host, await _call(views.revert, request.batch_id, actor=ACTOR))


@request_handler(MEMORY_VERIFY)
async def invincat_memory_verify(ls: InvincatLanguageServer, params: Any) -> MemoryVerifyResult:
    request = parse_params(MemoryVerifyParams, params, MEMORY_VERIFY)
    host = ls.projects.for_folder(request.folder, MEMORY_VERIFY)
    await ls.memory_sync.service(host)  # the full service reads: watch its stores
    views = await _views(ls, host)
    report = await _call(
        views.verify_view, request.scope, include_archived=request.include_archived
    )
    return cast("MemoryVerifyResult", report)
