""" "Invincat: fix / explain / ask" in the lightbulb, for any server's diagnostics: no
Invincat-specific client code needed, and the fix arrives as a pending edit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.lsp.client import InvincatClient, start_client, stop_client, wait_until

BROKEN = '{"name": "demo" "version": 1}\n'
FIXED = '{"name": "demo", "version": 1}\n'


def _json_diagnostic() -> types.Diagnostic:
    """What the editor's JSON support reports for BROKEN (another server's diagnostic)."""
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=0, character=16), end=types.Position(line=0, character=25)
        ),
        message="Expected comma",
        severity=types.DiagnosticSeverity.Error,
        source="json",
        code=514,
    )


async def _actions(
    lsp: InvincatClient,
    uri: str,
    where: types.Range,
    diagnostics: list[types.Diagnostic],
    only: list[str] | None = None,
) -> list[Any]:
    result = await lsp.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=where,
            context=types.CodeActionContext(diagnostics=diagnostics, only=only),
        )
    )
    return list(result or [])


async def _execute(lsp: InvincatClient, command: types.Command) -> Any:
    return await lsp.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    )


def _point(line: int, character: int) -> types.Range:
    at = types.Position(line=line, character=character)
    return types.Range(start=at, end=at)


async def test_a_foreign_diagnostic_gets_one_fix_that_ends_as_an_accepted_buffer_edit(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "package.json").write_text('{"name": "demo"}\n')  # the disk differs
    uri = lsp.open_document(workspace / "package.json", BROKEN)
    foreign = _json_diagnostic()

    actions = await _actions(lsp, uri, _point(0, 17), [foreign])
    assert [(a.title, a.kind) for a in actions] == [
        ('Invincat: fix this: "Expected comma"', "quickfix")
    ]
    [fix] = actions
    assert list(fix.diagnostics or []) == [foreign] and fix.edit is None
    assert fix.command.command == "invincat.startChat"

    args = {
        "path": "package.json",
        "old_string": '"demo" "version"',
        "new_string": '"demo", "version"',
    }
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "edit_file", "arguments": args}]},
            {"content": "Added the comma."},
        ]
    )
    ref = await _execute(lsp, fix.command)
    assert set(ref) == {"threadId", "turnId"}

    # The edit is a pending edit: an Invincat diagnostic with accept/reject actions.
    await lsp.wait_event("approval_requested", where=lambda e: e["turnId"] == ref["turnId"])
    # The model got the problem and the unsaved buffer's text around it.
    content = fake_openai.chat_requests()[0]["messages"][-1]["content"]
    assert content.startswith("Fix this problem reported by json: Expected comma\n\n")
    assert "- package.json:1:17 error [json 514]: Expected comma" in content
    assert '     1\t{"name": "demo" "version": 1}' in content
    [mark] = await wait_until(lambda: lsp.diagnostics.get(uri), what="pending-edit diagnostic")
    assert mark.source == "invincat"
    actions = await _actions(lsp, uri, mark.range, [mark, foreign])
    titles = [a.title for a in actions]
    assert titles[:2] == ["Invincat: accept proposed edit", "Invincat: reject proposed edit"]
    # Still exactly one fix for the foreign diagnostic, none for Invincat's own mark.
    assert titles.count('Invincat: fix this: "Expected comma"') == 1
    assert not any(t.startswith("Invincat: fix") and "proposes" in t for t in titles)

    assert await _execute(lsp, actions[0].command) == {"resolved": True}
    end = await lsp.turn_end(ref["turnId"])
    assert end["status"] == "completed"
    assert lsp.text(uri) == FIXED  # through workspace/applyEdit
    assert (workspace / "package.json").read_text() == '{"name": "demo"}\n'


async def test_explain_for_a_selection_and_only_filters_kinds(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    uri = lsp.open_document(workspace / "package.json", BROKEN)
    selection = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=15)
    )
    actions = await _actions(lsp, uri, selection, [_json_diagnostic()])
    assert [(a.title, a.kind) for a in actions] == [
        ('Invincat: fix this: "Expected comma"', "quickfix"),
        ("Invincat: explain", "refactor.invincat.explain"),
    ]  # no "ask": this client did not say it can ask for a question
    only_refactor = await _actions(lsp, uri, selection, [_json_diagnostic()], ["refactor"])
    assert [a.title for a in only_refactor] == ["Invincat: explain"]
    assert await _actions(lsp, uri, selection, [], ["source"]) == []

    # The command validates its argument like invincat/chat, naming itself.
    with pytest.raises(JsonRpcException) as caught:
        await lsp.workspace_execute_command_async(
            types.ExecuteCommandParams(command="invincat.startChat", arguments=[{"mode": 1}])
        )
    assert caught.value.code == -32602
    assert caught.value.message == (
        "Invalid params for invincat.startChat: `prompt` is required; `mode` must be a "
        "string, got number."
    )

    fake_openai.add_steps([{"content": "It is the package name."}])
    ref = await _execute(lsp, actions[1].command)
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"  # after the request
    content = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert content.startswith("Explain this code.\n\n<editor_context>")
    assert "Selection in package.json, line 1:" in content


async def test_the_set_of_actions_follows_initialization_options_and_configuration(
    invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    lsp = await start_client(
        invincat_env,
        workspace,
        editor,
        options={"codeActions": {"ask": True, "fix": False}},
        configuration={"invincat.codeActions": {"explain": False}},
    )
    try:
        uri = lsp.open_document(workspace / "package.json", BROKEN)
        selection = types.Range(
            start=types.Position(line=0, character=0), end=types.Position(line=0, character=15)
        )
        deadline = asyncio.get_running_loop().time() + DEADLINE
        while True:  # the configuration arrives in the background after `initialized`
            titles = [a.title for a in await _actions(lsp, uri, selection, [_json_diagnostic()])]
            if titles == ["Invincat: ask about selection"]:
                break
            assert asyncio.get_running_loop().time() < deadline, titles
            await asyncio.sleep(0.05)
        [ask] = await _actions(lsp, uri, selection, [])
        assert ask.kind == "refactor.invincat.ask"
        # No prompt: the client asks its user and fills it in before running the command.
        assert "prompt" not in ask.command.arguments[0]
        assert ask.command.arguments[0]["context"]["selections"][0]["range"]["end"] == {
            "line": 0,
            "character": 15,
        }
    finally:
        await stop_client(lsp)
