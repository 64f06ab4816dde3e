"""`invincat/offload`: move all but the latest turn of a thread out of the model's context.

The runtime writes the older messages to `.invincat/offload/<thread>.md` and answers the
compaction report; it refuses an unknown thread (-32011), a thread running a turn (-32012)
and one with a pending approval (-32013), each with what to do instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from invincat_server.lsp.errors import request_handler, rpc_error
from invincat_server.lsp.protocol import (
    OFFLOAD,
    ErrorCode,
    OffloadParams,
    OffloadResult,
    parse_params,
)

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer


@request_handler(OFFLOAD)
async def invincat_offload(ls: InvincatLanguageServer, params: Any) -> OffloadResult:
    request = parse_params(OffloadParams, params, OFFLOAD)
    info, owner = await ls.projects.thread(request.thread_id)
    if info is not None and owner is None:
        raise rpc_error(
            ErrorCode.INVALID_PARAMS,
            f"Invalid params for {OFFLOAD}: thread {request.thread_id} belongs to "
            f"{info.workspace}, which is not open; open that folder to offload it.",
        )
    host = owner or ls.projects.first()  # unknown: its session says so
    if request.folder is not None:
        named = ls.projects.for_folder(request.folder, OFFLOAD)
        if owner is not None and named is not owner:
            raise rpc_error(
                ErrorCode.INVALID_PARAMS,
                f"Invalid params for {OFFLOAD}: thread {request.thread_id} belongs to "
                f"{owner.root}, not {named.root}.",
            )
    session = await host.require()
    return cast(OffloadResult, await session.offload(request.thread_id))
