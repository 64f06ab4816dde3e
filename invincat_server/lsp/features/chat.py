"""`invincat/chat`, the `invincat.startChat` command and `invincat/cancel`: start and stop
turns.

A chat answers `{threadId, turnId}` at once and the turn streams as `invincat/event`
notifications (ending with `turn_end`). With `"wait": true` the request stays open until
the turn ends and answers its `status`; `$/cancelRequest` on such a request cancels the
turn. `invincat/cancel` and `window/workDoneProgress/cancel` on the turn's progress token
cancel a turn too.

A chat runs in one project (docs/protocol.md, "Multi-root workspaces"): `folder`, else
the context's document, else the continued thread's project, else the first folder.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

from pygls.lsp.server import LanguageServer

from invincat_server.lsp.chat_context import editor_context
from invincat_server.lsp.errors import request_handler, rpc_error
from invincat_server.lsp.protocol import (
    CANCEL,
    CHAT,
    START_CHAT_COMMAND,
    CancelParams,
    CancelResult,
    ChatParams,
    ErrorCode,
    TurnRef,
    parse_params,
)
from invincat_server.runtime.project.limits import prompt_problem

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer


@request_handler(CHAT)
async def invincat_chat(ls: InvincatLanguageServer, params: Any) -> TurnRef:
    return await start_chat(ls, params, CHAT)


async def start_chat(ls: InvincatLanguageServer, params: Any, method: str) -> TurnRef:
    """Validate chat params and start the turn (`invincat/chat` and the
    `invincat.startChat` command, whose errors name `method`)."""
    chat = parse_params(ChatParams, params, method)
    if problem := prompt_problem(chat.prompt):  # checked before any project work
        raise rpc_error(ErrorCode.INVALID_PARAMS, problem)
    host = await ls.projects.for_chat(chat.folder, chat.context, chat.thread_id, method)
    session = await host.require()
    context = None
    if chat.context is not None:
        context = editor_context(ls, session.workspace, chat.context, method)
    turn = await session.start_turn(chat.prompt, chat.thread_id, chat.mode, context)
    # The runtime just closed approvals left pending on this thread (superseded); the
    # new turn has not run yet, so nothing of its own is dropped here.
    ls.proposals.remove_where(thread_id=turn.thread_id)
    if chat.work_done_token is not None:
        ls.turn_progress.use_client_token(turn.turn_id, chat.work_done_token)
    ref: TurnRef = {"threadId": turn.thread_id, "turnId": turn.turn_id}
    if not chat.wait:
        return ref
    try:
        ref["status"] = await turn.wait()
    except asyncio.CancelledError:
        # $/cancelRequest on a waiting chat cancels its turn, then pygls answers the
        # request with RequestCancelled.
        session.cancel(turn.turn_id)
        raise
    return ref


@request_handler(START_CHAT_COMMAND)
async def invincat_start_chat_command(ls: LanguageServer, *arguments: Any) -> TurnRef:
    """`workspace/executeCommand` `invincat.startChat` (the "Invincat: fix / explain / ask"
    code actions) with one argument: the same object `invincat/chat` takes."""
    # Annotated with pygls' class: pygls resolves the command's type hints at run time.
    params = arguments[0] if len(arguments) == 1 else list(arguments)
    return await start_chat(cast("InvincatLanguageServer", ls), params, START_CHAT_COMMAND)


@request_handler(CANCEL)
async def invincat_cancel(ls: InvincatLanguageServer, params: Any) -> CancelResult:
    cancel = parse_params(CancelParams, params, CANCEL)
    if not any(host.session is not None for host in ls.projects.ordered()):
        await ls.projects.first().require()  # nothing open yet: wait, or say why not
    return {"cancelled": ls.projects.cancel_turn(cancel.turn_id)}
