"""`textDocument/codeAction`: pending edits' accept/reject, and "Invincat: fix / explain /
ask" for any server's diagnostics and the selection.

Accept/reject are offered wherever the requested range touches a pending edit's
diagnostics. Both carry only a command (`invincat.resolveApproval`), never the
WorkspaceEdit: the approved tool writes the change itself through `workspace/applyEdit`,
and if the editor applied the edit first, `edit_file` would no longer find its
`old_string` and fail.

`Invincat: fix this: "MESSAGE"` is offered once per diagnostic in the request's context
whose source is not Invincat (pyright, ruff, tsc, the editor's JSON support…),
"Invincat: explain" and "Invincat: ask about selection" for a non-empty range (the set is
configurable, see lsp/code_action_settings.py). They carry `invincat.startChat` with
`invincat/chat` params, so choosing one starts a turn with that context; its edits arrive
as pending edits. This handler reads only in-memory state: no session wait, no model call,
no file read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.capabilities import get_capability

from invincat_server.lsp.errors import request_handler
from invincat_server.lsp.protocol import (
    ACCEPT_EDIT_TITLE,
    ASK_ACTION_KIND,
    ASK_TITLE,
    DIAGNOSTIC_SOURCE,
    EXPLAIN_ACTION_KIND,
    EXPLAIN_TITLE,
    FIX_TITLE,
    REJECT_EDIT_TITLE,
    RESOLVE_APPROVAL_COMMAND,
    START_CHAT_COMMAND,
)

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer

_QUICKFIX = types.CodeActionKind.QuickFix
Action = types.CodeAction | types.Command

TITLE_MESSAGE_CHARS = 60
CONTEXT_LINES = 3
"""Lines above and below a diagnostic sent along with a fix, so the model sees the code."""


def _wanted(kind: str, only: Sequence[types.CodeActionKind | str] | None) -> bool:
    """LSP kinds are hierarchical: `only: ["refactor"]` includes `refactor.invincat.ask`."""
    if not only:
        return True
    wanted = [str(getattr(want, "value", want)) for want in only]
    return any(kind == want or kind.startswith(f"{want}.") for want in wanted)


@request_handler(types.TEXT_DOCUMENT_CODE_ACTION)
async def text_document_code_action(
    ls: InvincatLanguageServer, params: types.CodeActionParams
) -> list[Action] | None:
    caps = ls.client_capabilities
    literals = get_capability(caps, "text_document.code_action.code_action_literal_support")
    actions = _pending_edit_actions(ls, params, literals is not None)
    actions += _chat_actions(ls, params, literals is not None)
    return actions or None


def _pending_edit_actions(
    ls: InvincatLanguageServer, params: types.CodeActionParams, literals: bool
) -> list[Action]:
    if not _wanted(_QUICKFIX.value, params.context.only):
        return []
    found = ls.proposals.at(params.text_document.uri, params.range)
    if not found:
        return []
    preferred = get_capability(
        ls.client_capabilities, "text_document.code_action.is_preferred_support", False
    )
    actions: list[Action] = []
    for proposal, diagnostics in found:
        for title, decision in ((ACCEPT_EDIT_TITLE, "approve"), (REJECT_EDIT_TITLE, "reject")):
            command = types.Command(
                title=title,
                command=RESOLVE_APPROVAL_COMMAND,
                arguments=[{"approvalId": proposal.approval_id, "decision": decision}],
            )
            if not literals:  # LSP < 3.8 clients only understand bare commands
                actions.append(command)
                continue
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=_QUICKFIX,
                    diagnostics=diagnostics,
                    command=command,
                    is_preferred=(decision == "approve") if preferred else None,
                )
            )
    return actions


def _in_workspace(ls: InvincatLanguageServer, uri: str) -> bool:
    """Only files the chat would accept as context: inside an open project (the chat the
    action starts is routed to that project by its document)."""
    return ls.projects.find_uri(uri) is not None


def _chat_actions(
    ls: InvincatLanguageServer, params: types.CodeActionParams, literals: bool
) -> list[Action]:
    settings = ls.code_action_settings
    uri = params.text_document.uri
    if not (settings.fix or settings.explain or settings.ask) or not _in_workspace(ls, uri):
        return []
    document = ls.workspace.text_documents.get(uri)
    active: dict[str, Any] = {"uri": uri}
    if document is not None and document.language_id:
        active["languageId"] = document.language_id
    converter = get_converter()
    actions: list[Action] = []
    if settings.fix and _wanted(_QUICKFIX.value, params.context.only):
        for diagnostic in params.context.diagnostics:
            if diagnostic.source == DIAGNOSTIC_SOURCE:
                continue  # Invincat's own pending-edit marks have accept/reject
            actions.append(_fix_action(diagnostic, active, converter, literals))
    selected = params.range.start != params.range.end
    json_range = converter.unstructure(params.range, types.Range)
    context = {"activeDocument": active, "selections": [{"range": json_range}]}
    if selected and settings.explain and _wanted(EXPLAIN_ACTION_KIND, params.context.only):
        chat = {"prompt": "Explain this code.", "context": context}
        actions.append(_action(EXPLAIN_TITLE, EXPLAIN_ACTION_KIND, chat, literals))
    if selected and settings.ask and _wanted(ASK_ACTION_KIND, params.context.only):
        # No prompt: the client intercepts the command and fills in the user's question.
        chat = {"context": context}
        actions.append(_action(ASK_TITLE, ASK_ACTION_KIND, chat, literals))
    return actions


def _fix_action(
    diagnostic: types.Diagnostic, active: dict[str, Any], converter: Any, literals: bool
) -> Action:
    message = " ".join(diagnostic.message.split())
    short = (
        message if len(message) <= TITLE_MESSAGE_CHARS else message[: TITLE_MESSAGE_CHARS - 1] + "…"
    )
    reported = f" reported by {diagnostic.source}" if diagnostic.source else ""
    item: dict[str, Any] = {
        "range": converter.unstructure(diagnostic.range, types.Range),
        "message": diagnostic.message,
    }
    if diagnostic.severity is not None:
        item["severity"] = int(diagnostic.severity)
    if diagnostic.source:
        item["source"] = diagnostic.source
    if diagnostic.code is not None:
        item["code"] = diagnostic.code
    # The lines around the problem, so the model sees the code without a tool call.
    start = max(0, diagnostic.range.start.line - CONTEXT_LINES)
    around = {
        "start": {"line": start, "character": 0},
        "end": {"line": diagnostic.range.end.line + CONTEXT_LINES + 1, "character": 0},
    }
    chat = {
        "prompt": f"Fix this problem{reported}: {message}",
        "context": {
            "activeDocument": active,
            "diagnostics": [item],
            "attachments": [{"uri": active["uri"], "range": around}],
        },
    }
    title = f'{FIX_TITLE}: "{short}"'
    return _action(title, _QUICKFIX.value, chat, literals, diagnostics=[diagnostic])


def _action(
    title: str,
    kind: str,
    chat: dict[str, Any],
    literals: bool,
    diagnostics: list[types.Diagnostic] | None = None,
) -> Action:
    command = types.Command(title=title, command=START_CHAT_COMMAND, arguments=[chat])
    if not literals:
        return command
    return types.CodeAction(title=title, kind=kind, diagnostics=diagnostics, command=command)
