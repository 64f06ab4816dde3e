"""An approved edit the editor does not take is written nowhere (issue 13 §3).

Emacs' eglot asks "Server wants to edit … Proceed?" before applying a server's edit:
answering "n" is `applied: false`, and leaving the prompt open is no answer at all. The
file is open with unsaved text that differs from the disk, so a fallback write to disk
would also save that text. And the edit request must reach the editor before the answer
to the command that approved it: Emacs 28's jsonrpc.el handles one message per read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.lsp.client import InvincatClient, start_client, stop_client, wait_until

DISK = "disk line one\ndisk line two\n"
BUFFER = "unsaved line one\nunsaved line two\n"
EDITED = "unsaved line one\nedited line two\n"
HOW = ["code action", "panel"]
APPROVE_ID = "approve-1"


async def _pending_edit(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> tuple[str, str, dict[str, Any]]:
    """notes.txt open with unsaved text and an edit of it waiting for approval:
    (uri, turn id, the approval_requested event)."""
    (workspace / "notes.txt").write_text(DISK)
    uri = lsp.open_document(workspace / "notes.txt", BUFFER)
    args = {"path": "notes.txt", "old_string": "unsaved line two", "new_string": "edited line two"}
    fake_openai.add_steps(
        [{"tool_calls": [{"name": "edit_file", "arguments": args}]}, {"content": "Noted."}]
    )
    ref = await lsp.chat("rename line two")
    asked = await lsp.wait_event(
        "approval_requested", timeout=DEADLINE, where=lambda e: e["turnId"] == ref["turnId"]
    )
    await wait_until(lambda: lsp.diagnostics.get(uri), DEADLINE, "the pending-edit diagnostics")
    return uri, ref["turnId"], asked["event"]


async def _approve(lsp: InvincatClient, uri: str, approval_id: str, how: str) -> Any:
    """Approve from the chat panel or by executing the code action's command; the
    request's id is APPROVE_ID."""
    if how == "panel":
        answer = lsp.protocol.send_raw(
            "invincat/resolveApproval",
            {"approvalId": approval_id, "decision": "approve"},
            APPROVE_ID,
        )
        return await asyncio.wait_for(answer, DEADLINE)
    where = lsp.diagnostics[uri][0].range
    actions = await lsp.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=where,
            context=types.CodeActionContext(diagnostics=list(lsp.diagnostics[uri])),
        )
    )
    accept = next(a for a in actions or [] if a.title == "Invincat: accept proposed edit")
    command = accept if isinstance(accept, types.Command) else accept.command
    assert command is not None
    answer = lsp.protocol.send_raw(
        "workspace/executeCommand",
        {"command": command.command, "arguments": command.arguments},
        APPROVE_ID,
    )
    return await asyncio.wait_for(answer, DEADLINE)


def _edit_result(lsp: InvincatClient, turn_id: str) -> dict[str, Any]:
    [result] = [
        e
        for e in lsp.turn_events(turn_id)
        if e["type"] == "tool_result" and e["name"] == "edit_file"
    ]
    return result


def _model_saw(fake_openai: FakeOpenAIServer) -> str:
    """The edit's tool result as the model got it in its next request."""
    messages = fake_openai.chat_requests()[-1]["messages"]
    return str(next(m for m in messages if m["role"] == "tool")["content"])


@pytest.mark.parametrize("how", HOW)
async def test_an_edit_the_editor_declines_writes_nothing_and_is_rejected(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path, how: str
) -> None:
    lsp.refuse_apply_edit = "the user answered no"
    uri, turn_id, asked = await _pending_edit(lsp, fake_openai, workspace)

    assert await _approve(lsp, uri, asked["approval_id"], how) == {"resolved": True}
    assert (await lsp.turn_end(turn_id, timeout=DEADLINE))["status"] == "completed"

    # The editor was asked once and said no: neither the edit nor the unsaved buffer
    # text reached the disk, and the buffer is as the user left it.
    assert len(lsp.apply_edit_requests) == 1
    assert (workspace / "notes.txt").read_bytes() == DISK.encode()
    assert lsp.text(uri) == BUFFER
    result = _edit_result(lsp, turn_id)
    assert result["status"] == "rejected"
    assert "the user answered no" in result["content"]
    assert "Nothing was written" in result["content"]
    # The turn went on: the model was told, and answered.
    assert "the user answered no" in _model_saw(fake_openai)
    await wait_until(lambda: len(lsp.diagnostics[uri]) == 0, DEADLINE, "diagnostics cleared")


@pytest.fixture
async def impatient_lsp(
    invincat_env: dict[str, str], workspace: Path, editor: str
) -> AsyncIterator[InvincatClient]:
    """A server that waits 2 s (not 30) for the editor's answer to an edit."""
    client = await start_client(
        {**invincat_env, "INVINCAT_APPLY_EDIT_TIMEOUT": "2"}, workspace, editor
    )
    yield client
    if client.hold_apply_edit is not None:
        client.hold_apply_edit.set()  # let the unanswered handler finish
    await stop_client(client)


@pytest.mark.parametrize("how", HOW)
async def test_an_edit_the_editor_never_answers_writes_nothing(
    impatient_lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path, how: str
) -> None:
    lsp = impatient_lsp
    lsp.hold_apply_edit = asyncio.Event()  # the editor's prompt stays open
    uri, turn_id, asked = await _pending_edit(lsp, fake_openai, workspace)

    assert await _approve(lsp, uri, asked["approval_id"], how) == {"resolved": True}
    assert (await lsp.turn_end(turn_id, timeout=DEADLINE))["status"] == "completed"

    assert (workspace / "notes.txt").read_bytes() == DISK.encode()
    assert lsp.text(uri) == BUFFER
    result = _edit_result(lsp, turn_id)
    assert result["status"] == "rejected"
    assert "did not answer within 2 s" in result["content"]
    assert "did not answer within 2 s" in _model_saw(fake_openai)
    [warning] = [m.message for m in lsp.messages if m.type == types.MessageType.Warning]
    assert "nothing was written" in warning and "INVINCAT_APPLY_EDIT_TIMEOUT" in warning
    await wait_until(lambda: len(lsp.diagnostics[uri]) == 0, DEADLINE, "diagnostics cleared")


@pytest.mark.parametrize("how", HOW)
async def test_the_edit_request_comes_before_the_answer_to_the_approval(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path, how: str
) -> None:
    # Every message from the server's stdout, in the order it was read.
    arrived: list[tuple[str, Any]] = []
    handle = lsp.protocol.handle_message

    def record(message: Any) -> None:
        method = getattr(message, "method", None)
        arrived.append(("request", method) if method else ("response", message.id))
        handle(message)

    lsp.protocol.handle_message = record  # type: ignore[method-assign]
    uri, turn_id, asked = await _pending_edit(lsp, fake_openai, workspace)

    assert await _approve(lsp, uri, asked["approval_id"], how) == {"resolved": True}
    assert (await lsp.turn_end(turn_id, timeout=DEADLINE))["status"] == "completed"
    assert lsp.text(uri) == EDITED  # accepted in the buffer
    assert (workspace / "notes.txt").read_bytes() == DISK.encode()

    edit_at = arrived.index(("request", "workspace/applyEdit"))
    answer_at = arrived.index(("response", APPROVE_ID))
    assert edit_at < answer_at, f"the approval was answered first: {arrived}"
