"""Editor buffers as the agent's view of files: the runtime's `DocumentSource`.

`read_text` returns the unsaved text of documents open in the editor; `write_text`
applies a change to an open document with `workspace/applyEdit` (minimal TextEdits, so
the buffer changes in place and undo works) and tells the runtime to write to disk when
the document is not open or the client cannot apply edits. When the editor refuses the
edit, fails it or does not answer in time, nothing is written anywhere (`EditorDeclined`):
the disk text would be the buffer's text plus the edit, so falling back to the disk would
save the user's unsaved text and turn the editor's "no" into a write.
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

from invincat_server.lsp.deliveries import EditDeliveries
from invincat_server.lsp.textedits import LineIndex, diff_hunks

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer

log = logging.getLogger("invincat.lsp.documents")

APPLY_EDIT_TIMEOUT = 30.0
"""Seconds to wait for the editor's answer to `workspace/applyEdit` by default; after that
the edit counts as not applied (`INVINCAT_APPLY_EDIT_TIMEOUT` changes it)."""
TIMEOUT_SETTING = "INVINCAT_APPLY_EDIT_TIMEOUT"
MAX_TIMEOUT = 3600.0


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
        self._timeout: float | None = None
        self.deliveries = EditDeliveries()
        """Approvals whose answer waits until their edit was sent (features/approvals.py)."""

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

    def open_paths(self) -> list[Path]:
        """The real paths of the `file:` documents open in the editor."""
        paths = (uri_to_path(uri) for uri in list(self._ls.workspace.text_documents))
        return [path for path in paths if path is not None]

    def is_open(self, path: Path) -> bool:
        return self.uri_for(path) is not None

    def edits_in_editor(self, path: Path) -> bool:
        """True if a write of `path` goes to the editor (`workspace/applyEdit`)."""
        return self.is_open(path) and self._can_apply_edits()

    def _can_apply_edits(self) -> bool:
        return bool(get_capability(self._ls.client_capabilities, "workspace.apply_edit", False))

    def apply_edit_timeout(self) -> float:
        """Seconds to wait for the editor's answer to an edit (`INVINCAT_APPLY_EDIT_TIMEOUT`).

        Editors that ask their user before applying a server's edit (Emacs' eglot) need
        this to cover a person reading the prompt."""
        if self._timeout is None:
            self._timeout = APPLY_EDIT_TIMEOUT
            raw = os.environ.get(TIMEOUT_SETTING, "").strip()
            if raw:
                try:
                    value = float(raw)
                except ValueError:
                    value = -1.0
                if 0 < value <= MAX_TIMEOUT:
                    self._timeout = value
                else:
                    self._ls.warn_user(
                        f"{TIMEOUT_SETTING}={raw!r} is not a number of seconds between 0 and "
                        f"{MAX_TIMEOUT:g}; using {APPLY_EDIT_TIMEOUT:g}."
                    )
        return self._timeout

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
        """Apply the change in the editor; False means the caller writes the disk.

        Raises EditorDeclined if the editor refuses the edit, fails it or does not answer:
        then nothing is written."""
        real = Path(os.path.realpath(path))
        try:
            return await self._write_text(path, real, text)
        finally:
            self.deliveries.reached_editor(real)  # the approval waiting for it is answered

    async def _write_text(self, path: Path, real: Path, text: str) -> bool:
        uri = self.uri_for(path)
        if uri is None:
            return False
        if not self._can_apply_edits():
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
        await self._apply(params, real)
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

    async def _apply(self, params: types.ApplyWorkspaceEditParams, real: Path) -> None:
        """Send workspace/applyEdit and wait for the answer; EditorDeclined unless applied."""
        # Imported here: runtime.tools pulls in LangChain, which is loaded by the time a
        # tool writes but must not be imported before `initialize` is answered.
        from invincat_server.runtime.tools.documents import EditorDeclined

        timeout = self.apply_edit_timeout()
        future = self._ls.protocol.send_request(types.WORKSPACE_APPLY_EDIT, params)
        # Written to the editor now: the approval that led here may be answered.
        self.deliveries.reached_editor(real)
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except TimeoutError:
            future.cancel()  # a late answer is dropped by InvincatProtocol
            self._ls.warn_user(
                f"The editor did not answer Invincat's request to edit {real.name} within "
                f"{timeout:g} s, so nothing was written. If the editor still asks, accepting "
                f"applies the edit. ({TIMEOUT_SETTING} sets how long Invincat waits.)"
            )
            raise EditorDeclined(
                f"the editor did not answer within {timeout:g} s. Its prompt may still be "
                "open: if the user accepts it later, the editor applies the change, so read "
                "the file before trying again."
            ) from None
        except JsonRpcException as exc:
            self._ls.warn_user(
                f"The editor failed Invincat's edit of {real.name} (error {exc.code}: "
                f"{exc.message}); nothing was written."
            )
            raise EditorDeclined(
                f"the editor answered with error {exc.code}: {exc.message}."
            ) from None
        except asyncio.CancelledError:
            future.cancel()
            raise
        if result is None or not getattr(result, "applied", False):
            why = getattr(result, "failure_reason", None) or "no reason given"
            raise EditorDeclined(f"the editor declined it ({why}).")
