"""Document sync: `textDocument/didOpen`, `didChange`, `didClose`.

pygls keeps the text of open documents (incremental sync) before these run; they keep the
agent's path → URI view current and move pending-edit diagnostics with the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from invincat_server.lsp.errors import notification_handler

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer


@notification_handler(types.TEXT_DOCUMENT_DID_OPEN)
async def text_document_did_open(
    ls: InvincatLanguageServer, params: types.DidOpenTextDocumentParams
) -> None:
    ls.documents.opened(params.text_document.uri)
    ls.proposals.document_changed(params.text_document.uri)


@notification_handler(types.TEXT_DOCUMENT_DID_CHANGE)
async def text_document_did_change(
    ls: InvincatLanguageServer, params: types.DidChangeTextDocumentParams
) -> None:
    ls.documents.changed(params.text_document.uri)
    ls.proposals.document_changed(params.text_document.uri)


@notification_handler(types.TEXT_DOCUMENT_DID_CLOSE)
async def text_document_did_close(
    ls: InvincatLanguageServer, params: types.DidCloseTextDocumentParams
) -> None:
    ls.documents.closed(params.text_document.uri)
    # Now the disk text is what an edit would change.
    ls.proposals.document_changed(params.text_document.uri)
