"""Editor buffers as the agent's view of files: the runtime's `DocumentSource`.

`read_text` returns the unsaved text of documents open in the editor; `write_text`
applies a change to an open document with `workspace/applyEdit` (minimal TextEdits, so
the buffer changes in place and undo works) and tells the runtime to write to disk when
the document is not open, the client cannot apply edits, or it refuses this one.
Paths are the runtime's resolved absolute paths; URIs are mapped through `realpath` so a
document opened through a symlink is still found.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path, to_fs_path

from invincat_server.lsp.textedits import LineIndex, diff_hunks

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer

log = logging.getLogger("invincat.lsp.documents")

APPLY_EDIT_TIMEOUT = 30.0
"""Seconds to wait for the editor to apply an edit before writing to disk instead."""


def uri_to_path(uri: str) -> Path | None:
    """The real path of a `file:` URI, None for other schemes (untitled:, git:, ...)."""
    path = to_fs_path(uri)
    if path is None or not uri.startswith("file:"):
        return None
    return Path(os.path.realpath(path))


def path_to_uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None  # an absolute local path always has a file: URI
    return uri


class EditorDocuments:
    """Open documents overlaying the disk, with writes going through the editor."""

    def __init__(self, ls: InvincatLanguageServer) -> None:
        self._ls = ls
        # realpath → URI for documents whose URI is not simply the real path (symlinks).
        self._aliases: dict[Path, str] = {}
        # URI → (version the edit was sent against, resulting text), until the editor's
        # didChange for it arrives: some clients answer applyEdit before notifying.
        self._applied: dict[str, tuple[int | None, str]] = {}
        self._told_no_apply_edit = False

    # document sync (called by features/documents.py) -----------------------------
    def opened(self, uri: str) -> None:
        path = uri_to_path(uri)
        if path is not None and path_to_uri(path) != uri:
            self._aliases[path] = uri

    def changed(self, uri: str) -> None:
        pending = self._applied.get(uri)
        document = self._document(uri)
        if pending is not None and document is not None:
            if document.version is None or pending[0] is None or document.version > pending[0]:
                del self._applied[uri]

    def closed(self, uri: str) -> None:
        self._applied.pop(uri, None)
        for path, alias in list(self._aliases.items()):
            if alias == uri:
                del self._aliases[path]

    # lookups --------------------------------------------------------------------
    def _document(self, uri: str) -> Any:
        return self._ls.workspace.text_documents.get(unquote(uri))

    def uri_for(self, path: Path) -> str | None:
        """URI of the open document for `path`, None if it is not open."""
        if not self._ls.workspace.text_documents:
            return None  # the common case for grep over a whole workspace: no URI work
        uri = path_to_uri(path)
        if self._document(uri) is not None:
            return uri
        alias = self._aliases.get(path)
        return alias if alias is not None and self._document(alias) is not None else None

    def is_open(self, path: Path) -> bool:
        return self.uri_for(path) is not None

    def current_text(self, path: Path) -> str | None:
        """Buffer text if open, else the disk text; None if neither exists or is text."""
        text = self.read_text(path)
        if text is not None:
            return text
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    # DocumentSource -------------------------------------------------------------
    def read_text(self, path: Path) -> str | None:
        """Unsaved buffer text if the file is open in the editor, else None."""
        uri = self.uri_for(path)
        if uri is None:
            return None
        pending = self._applied.get(uri)
        if pending is not None:
            return pending[1]
        return str(self._document(uri).source)

    async def write_text(self, path: Path, text: str) -> bool:
        """Apply the change in the editor; False means the caller writes the disk."""
        uri = self.uri_for(path)
        if uri is None:
            return False
        if not get_capability(self._ls.client_capabilities, "workspace.apply_edit", False):
            if not self._told_no_apply_edit:
                self._told_no_apply_edit = True
                self._ls.warn_user(
                    "This editor does not support workspace/applyEdit: Invincat writes "
                    "approved edits of open files to disk; reload them to see the changes."
                )
            return False
        await self._settled(uri)
        document = self._document(uri)
        old = self.read_text(path) or ""
        hunks = diff_hunks(old, text)
        if not hunks:
            return True
        edits = LineIndex(old, self._ls.workspace.position_codec.client_num_units).text_edits(hunks)
        version = document.version
        params = types.ApplyWorkspaceEditParams(
            edit=self._workspace_edit(uri, version, edits), label=f"Invincat: edit {path.name}"
        )
        reason = await self._apply(params)
        if reason is not None:
            self._ls.warn_user(
                f"The editor did not apply Invincat's edit to {path.name} ({reason}); "
                "it was written to disk instead — reload the file to see it."
            )
            return False
        self._applied[uri] = (version, text)
        self.changed(uri)  # the didChange may already have arrived
        return True

    async def _settled(self, uri: str, timeout: float = 1.0) -> None:
        """Wait for the didChange of our previous edit: a new edit must name the
        document version that includes it, or the editor would refuse it as stale."""
        deadline = asyncio.get_running_loop().time() + timeout
        while uri in self._applied and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)

    def _workspace_edit(
        self, uri: str, version: int | None, edits: list[types.TextEdit]
    ) -> types.WorkspaceEdit:
        caps = self._ls.client_capabilities
        if get_capability(caps, "workspace.workspace_edit.document_changes", False):
            # A versioned edit is refused by the editor if the buffer changed since we
            # read it, instead of being applied at the wrong place.
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            edit = types.TextDocumentEdit(text_document=identifier, edits=list(edits))
            return types.WorkspaceEdit(document_changes=[edit])
        return types.WorkspaceEdit(changes={uri: list(edits)})

    async def _apply(self, params: types.ApplyWorkspaceEditParams) -> str | None:
        """Send workspace/applyEdit; None on success, else why it failed."""
        future = self._ls.protocol.send_request(types.WORKSPACE_APPLY_EDIT, params)
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(future), APPLY_EDIT_TIMEOUT)
        except TimeoutError:
            future.cancel()  # a late answer is dropped by InvincatProtocol
            return f"no answer within {APPLY_EDIT_TIMEOUT:g}s"
        except JsonRpcException as exc:
            return f"error {exc.code}: {exc.message}"
        except asyncio.CancelledError:
            future.cancel()
            raise
        if result is None or not getattr(result, "applied", False):
            return getattr(result, "failure_reason", None) or "the editor refused it"
        return None
