"""`invincat/checkpoints/list`, `diff` and `restore`: rewinding a thread from the editor.

Only translation: the turns, the plan and the restore are the core's
(runtime/checkpoints/rewind.py; open_files.py for the files open in this editor;
wire.py for the JSON, the objects `invincat rewind --json` prints). A file open here is
its buffer: the diff runs from the buffer's text, and the restored text goes into the
buffer through `workspace/applyEdit` (minimal edits, so the editor's undo takes it back);
the disk gets it when the user saves, as for the agent's own edits of open files. Other
files are restored on disk by the core. A refused edit costs that file only (`failed`).

Routed to the thread's project, which must be open (its session sees the thread's running
turn and pending approvals, which `restore` refuses). `restore` plans first (the turn
numbers are the conversation's), then makes the conversation forget (scope
`conversation`/`both`: refused → nothing changed), then restores the files.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from invincat_server.lsp.errors import request_handler, rpc_error
from invincat_server.lsp.protocol import (
    CHECKPOINTS_DIFF,
    CHECKPOINTS_LIST,
    CHECKPOINTS_RESTORE,
    CheckpointsDiffParams,
    CheckpointsDiffResult,
    CheckpointsListParams,
    CheckpointsListResult,
    CheckpointsRestoreParams,
    CheckpointsRestoreResult,
    ErrorCode,
    parse_params,
)

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer
    from invincat_server.runtime.checkpoints.open_files import EditorPlan
    from invincat_server.runtime.checkpoints.rewind import Rewinder
    from invincat_server.runtime.session import Session


async def _project(
    ls: InvincatLanguageServer, thread_id: str, method: str
) -> tuple[Rewinder, Session, Path]:
    """The thread's rewinder, its project's session and its real root."""
    from invincat_server.runtime.checkpoints.rewind import Rewinder
    from invincat_server.runtime.errors import UnknownThreadError

    info, owner = await ls.projects.thread(thread_id)
    if info is None:
        raise UnknownThreadError(
            f"Unknown thread {thread_id!r}; list threads with `invincat/threads/list`."
        )
    if owner is None:
        raise rpc_error(
            ErrorCode.INVALID_PARAMS,
            f"Invalid params for {method}: thread {thread_id} belongs to {info.workspace}, "
            "which is not open; open that folder to rewind it.",
        )
    session = await owner.require()
    root = Path(os.path.realpath(info.workspace))
    return Rewinder(session.settings, root), session, root


def _open_texts(ls: InvincatLanguageServer, root: Path) -> dict[str, str]:
    """Project-relative path → buffer text of the open files the editor can edit."""
    from invincat_server.runtime.checkpoints.manifests import safe_relative

    texts: dict[str, str] = {}
    for path in ls.documents.open_paths():
        if not path.is_relative_to(root) or not ls.documents.edits_in_editor(path):
            continue
        rel = safe_relative(path.relative_to(root).as_posix())
        text = ls.documents.read_text(path)
        if rel is not None and text is not None:
            texts[rel] = text
    return texts


def _checkpoint_error(exc: Exception) -> Exception:
    """The core's refusal as a JSON-RPC error (a turn out of range is bad params)."""
    from invincat_server.runtime.checkpoints.open_files import TurnOutOfRange
    from invincat_server.runtime.checkpoints.store import CheckpointError

    if isinstance(exc, TurnOutOfRange):
        return rpc_error(ErrorCode.INVALID_PARAMS, str(exc))
    if isinstance(exc, CheckpointError):
        return rpc_error(ErrorCode.REFUSED, str(exc))
    return exc


async def _plan(
    ls: InvincatLanguageServer, rewinder: Rewinder, root: Path, request: CheckpointsDiffParams
) -> EditorPlan | None:
    """The code part's plan (None for scope `conversation`, whose turn is still checked)."""
    from invincat_server.runtime.checkpoints import open_files

    try:
        if request.scope == "conversation":
            assert request.to_turn is not None  # `check` refused undo with this scope
            found = await asyncio.to_thread(rewinder.checkpoints, request.thread_id)
            open_files.check_turn(found, request.to_turn)
            return None
        return await asyncio.to_thread(
            open_files.plan_in_editor,
            rewinder,
            request.thread_id,
            to_turn=request.to_turn,
            open_texts=_open_texts(ls, root),
        )
    except Exception as exc:
        raise _checkpoint_error(exc) from None


@request_handler(CHECKPOINTS_LIST)
async def invincat_checkpoints_list(
    ls: InvincatLanguageServer, params: Any
) -> CheckpointsListResult:
    from invincat_server.runtime.checkpoints import wire

    request = parse_params(CheckpointsListParams, params, CHECKPOINTS_LIST)
    request.check(CHECKPOINTS_LIST)
    rewinder, _session, _root = await _project(ls, request.thread_id, CHECKPOINTS_LIST)
    found = await asyncio.to_thread(rewinder.checkpoints, request.thread_id)
    return cast(CheckpointsListResult, wire.turns_json(found))


@request_handler(CHECKPOINTS_DIFF)
async def invincat_checkpoints_diff(
    ls: InvincatLanguageServer, params: Any
) -> CheckpointsDiffResult:
    from invincat_server.runtime.checkpoints import wire

    request = parse_params(CheckpointsDiffParams, params, CHECKPOINTS_DIFF)
    request.check(CHECKPOINTS_DIFF)
    rewinder, _session, root = await _project(ls, request.thread_id, CHECKPOINTS_DIFF)
    editor = await _plan(ls, rewinder, root, request)
    return cast(
        CheckpointsDiffResult,
        wire.plan_json(
            editor.plan if editor else None,
            thread_id=request.thread_id,
            to_turn=request.to_turn,
            scope=request.scope,
            in_editor=editor.buffers if editor else (),
        ),
    )


@request_handler(CHECKPOINTS_RESTORE)
async def invincat_checkpoints_restore(
    ls: InvincatLanguageServer, params: Any
) -> CheckpointsRestoreResult:
    from invincat_server.runtime.checkpoints import open_files, wire
    from invincat_server.runtime.tools.documents import EditorDeclined

    request = parse_params(CheckpointsRestoreParams, params, CHECKPOINTS_RESTORE)
    request.check(CHECKPOINTS_RESTORE)
    rewinder, session, root = await _project(ls, request.thread_id, CHECKPOINTS_RESTORE)
    await session.ensure_rewindable(request.thread_id)
    editor = await _plan(ls, rewinder, root, request)  # before the turns are renumbered
    removed = None
    if request.scope != "code":
        assert request.to_turn is not None
        removed = await session.rewind_conversation(request.thread_id, request.to_turn)
    if editor is None:
        return cast(CheckpointsRestoreResult, wire.done_json(None, removed))
    confirmed = set(cast(list[str], request.overwrite))
    try:
        done = await asyncio.to_thread(open_files.restore_in_editor, rewinder, editor, confirmed)
    except Exception as exc:
        raise _checkpoint_error(exc) from None
    for path, text in done.buffers.items():
        try:
            applied = await ls.documents.write_text(root / path, text)
        except EditorDeclined as exc:
            done.refused(path, f"The editor did not take the change: {exc}")
            continue
        if applied:
            done.applied(path)
        else:
            done.refused(path, "It was closed in the editor meanwhile; nothing was written.")
    return cast(CheckpointsRestoreResult, wire.done_json(done.result, removed))
