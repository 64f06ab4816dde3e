"""Edits to open, unsaved documents: the agent reads the buffer, the pending edit shows as
diagnostics + code actions where it applies, and accepting writes through the editor."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.lsp.client import InvincatClient, sent_edits, wait_until

DISK = "disk line\n"
# Multi-byte and non-BMP characters before the edit: UTF-8 (Neovim) and UTF-16 (VS Code)
# positions differ on this line, so a wrong position encoding would show.
PREFIX = "🐈 café: "
BUFFER = f"buffer line one\n{PREFIX}buffer line two\n"
EDITED = f"buffer line one\n{PREFIX}edited line two\n"


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _edit(old: str, new: str) -> dict[str, Any]:
    args = {"path": "notes.txt", "old_string": old, "new_string": new}
    return {"tool_calls": [{"name": "edit_file", "arguments": args}]}


async def _pending_edit(
    lsp: InvincatClient,
    fake_openai: FakeOpenAIServer,
    workspace: Path,
    then: tuple[dict[str, Any], ...] = (),
) -> tuple[str, dict[str, Any], str, list[types.Diagnostic]]:
    """Open notes.txt with unsaved text, ask for an edit of line two (then run `then`):
    (uri, turn ref, approval id, the diagnostics published for it)."""
    (workspace / "notes.txt").write_text(DISK)
    uri = lsp.open_document(workspace / "notes.txt", BUFFER)
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            _edit("buffer line two", "edited line two"),
            *then,
            {"content": "Edited."},
        ]
    )
    ref = await lsp.chat("rename line two")
    asked = await lsp.wait_event("approval_requested", where=lambda e: e["turnId"] == ref["turnId"])
    diagnostics = await wait_until(lambda: lsp.diagnostics.get(uri), what="diagnostics")
    return uri, ref, asked["event"]["approval_id"], list(diagnostics)


async def _code_actions(lsp: InvincatClient, uri: str, line: int, character: int) -> list[Any]:
    where = types.Position(line=line, character=character)
    result = await lsp.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=where, end=where),
            context=types.CodeActionContext(diagnostics=list(lsp.diagnostics.get(uri, []))),
        )
    )
    return list(result or [])


async def _execute(lsp: InvincatClient, command: types.Command) -> Any:
    return await lsp.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    )


async def test_accepting_the_code_action_edits_the_unsaved_buffer_through_the_editor(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    uri, ref, approval_id, diagnostics = await _pending_edit(lsp, fake_openai, workspace)

    # The model read the editor's unsaved text, not the file on disk.
    read_result = next(m for m in fake_openai.chat_requests()[1]["messages"] if m["role"] == "tool")
    assert "buffer line one" in read_result["content"] and "disk line" not in read_result["content"]

    # One Information diagnostic exactly on the word the edit replaces.
    start = _units(PREFIX, lsp.encoding)
    expected = types.Range(
        start=types.Position(line=1, character=start),
        end=types.Position(line=1, character=start + len("buffer")),
    )
    [diagnostic] = diagnostics
    assert diagnostic.range == expected
    assert diagnostic.severity == types.DiagnosticSeverity.Information
    assert diagnostic.source == "invincat" and "Edit file notes.txt" in diagnostic.message

    # Code actions there: accept and reject, commands only (the tool does the edit).
    assert await _code_actions(lsp, uri, 0, 3) == []
    accept, reject = await _code_actions(lsp, uri, 1, start + 2)
    assert (accept.title, reject.title) == (
        "Invincat: accept proposed edit",
        "Invincat: reject proposed edit",
    )
    assert accept.edit is None and accept.command.command == "invincat.resolveApproval"
    assert list(accept.command.arguments) == [{"approvalId": approval_id, "decision": "approve"}]
    assert list(accept.diagnostics or []) == [diagnostic]

    assert await _execute(lsp, accept.command) == {"resolved": True}
    end = await lsp.turn_end(ref["turnId"])
    assert end["status"] == "completed"

    # The server asked the editor to apply a minimal edit; the buffer changed, not the disk.
    [request] = lsp.apply_edit_requests
    [edit] = sent_edits(request)[uri]
    assert (edit.range, edit.new_text) == (expected, "edited")
    assert lsp.text(uri) == EDITED
    assert (workspace / "notes.txt").read_text() == DISK
    [result] = [e for e in lsp.turn_events(ref["turnId"]) if e["type"] == "tool_result"][1:]
    assert result["status"] == "success" and result["content"].startswith("Edited notes.txt")
    await wait_until(lambda: len(lsp.diagnostics[uri]) == 0, what="diagnostics cleared")


async def test_rejecting_through_the_code_action_changes_neither_buffer_nor_disk(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    uri, ref, _approval_id, diagnostics = await _pending_edit(lsp, fake_openai, workspace)
    _accept, reject = await _code_actions(
        lsp, uri, diagnostics[0].range.start.line, diagnostics[0].range.start.character
    )
    assert await _execute(lsp, reject.command) == {"resolved": True}
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"
    result = [e for e in lsp.turn_events(ref["turnId"]) if e["type"] == "tool_result"][-1]
    assert result["status"] == "rejected"
    assert lsp.apply_edit_requests == []
    assert lsp.text(uri) == BUFFER and (workspace / "notes.txt").read_text() == DISK
    await wait_until(lambda: len(lsp.diagnostics[uri]) == 0, what="diagnostics cleared")


async def test_the_first_resolution_wins_and_the_code_action_after_it_is_refused(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    second_edit = _edit("buffer line one", "buffer line ONE")
    uri, ref, approval_id, diagnostics = await _pending_edit(
        lsp, fake_openai, workspace, then=(second_edit,)
    )
    where = diagnostics[0].range.start
    _accept, reject = await _code_actions(lsp, uri, where.line, where.character)

    # The panel decides first (and allows further edits for this session)...
    approved = await lsp.resolve(approval_id, "approve_always", scope="session")
    assert approved == {"resolved": True}
    late = await _execute(lsp, reject.command)  # ...then the code action offered before.
    assert late["resolved"] is False and "already resolved" in late["reason"]

    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"
    decisions = [e for e in lsp.turn_events(ref["turnId"]) if e["type"] == "approval_resolved"]
    assert [d["decision"] for d in decisions] == ["approve_always (session)"]
    # Two edits in a row through the editor: the second is based on the first.
    assert len(lsp.apply_edit_requests) == 2
    assert lsp.text(uri) == EDITED.replace("line one", "line ONE")
    assert (workspace / "notes.txt").read_text() == DISK


async def test_a_reply_to_an_edit_request_the_server_gave_up_on_is_ignored(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    lsp.hold_apply_edit = asyncio.Event()
    uri, ref, approval_id, _diagnostics = await _pending_edit(lsp, fake_openai, workspace)
    await lsp.resolve(approval_id, "approve")
    await asyncio.wait_for(lsp.apply_edit_entered.wait(), DEADLINE)
    assert await lsp.request("invincat/cancel", {"turnId": ref["turnId"]}) == {"cancelled": True}
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "cancelled"

    lsp.hold_apply_edit.set()  # the editor answers now, after the server stopped waiting
    await wait_until(lambda: lsp.text(uri) == EDITED, what="the late edit")
    status = await lsp.request("invincat/debug/status")  # still serving
    assert status["sessionOpen"] is True
    assert [m.message for m in lsp.messages] == []  # no "Error in server" popup
    assert (workspace / "notes.txt").read_text() == DISK
