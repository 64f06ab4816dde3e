"""`textDocument/codeAction`: accept or reject a pending edit where it applies.

Offered wherever the requested range touches a pending edit's diagnostics. Both actions
carry only a command (`invincat.resolveApproval`), never the WorkspaceEdit: the approved
tool writes the change itself through `workspace/applyEdit`, and if the editor applied
the edit first, `edit_file` would no longer find its `old_string` and fail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.capabilities import get_capability

from invincat_server.lsp.errors import request_handler
from invincat_server.lsp.protocol import (
    ACCEPT_EDIT_TITLE,
    REJECT_EDIT_TITLE,
    RESOLVE_APPROVAL_COMMAND,
)

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer

_QUICKFIX = types.CodeActionKind.QuickFix


@request_handler(types.TEXT_DOCUMENT_CODE_ACTION)
async def text_document_code_action(
    ls: InvincatLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction | types.Command] | None:
    only = params.context.only
    if only and not any(_QUICKFIX.value.startswith(kind) for kind in only):
        return None
    found = ls.proposals.at(params.text_document.uri, params.range)
    if not found:
        return None
    caps = ls.client_capabilities
    literals = get_capability(caps, "text_document.code_action.code_action_literal_support")
    preferred = get_capability(caps, "text_document.code_action.is_preferred_support", False)
    actions: list[types.CodeAction | types.Command] = []
    for proposal, diagnostics in found:
        for title, decision in ((ACCEPT_EDIT_TITLE, "approve"), (REJECT_EDIT_TITLE, "reject")):
            command = types.Command(
                title=title,
                command=RESOLVE_APPROVAL_COMMAND,
                arguments=[{"approvalId": proposal.approval_id, "decision": decision}],
            )
            if literals is None:  # LSP < 3.8 clients only understand bare commands
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
