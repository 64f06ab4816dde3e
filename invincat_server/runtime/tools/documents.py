"""Where file text comes from and goes to: editor buffers first, then the disk.

When the assistant runs inside an editor, the user may have unsaved changes. Reading the
disk would show the model stale text, and writing the disk underneath an open buffer
would make the editor either clobber the change or prompt about a conflict. The language
server therefore provides a :class:`DocumentSource` that overlays open buffers; without
an editor, :class:`DiskOnly` is used and everything goes to disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from invincat_server.runtime.policy.workspace import Workspace

__all__ = [
    "DiskOnly",
    "DocumentSource",
    "EditorDeclined",
    "FileContentError",
    "is_binary",
    "load_text",
    "project_text",
    "store_text",
    "write_disk",
]


@runtime_checkable
class DocumentSource(Protocol):
    """Editor buffers overlay: the language server will implement this later."""

    def read_text(self, path: Path) -> str | None:
        """Unsaved buffer text if the file is open in an editor, else None."""
        ...

    async def write_text(self, path: Path, text: str) -> bool:
        """True if the editor applied the change (buffer updated), False → caller writes
        to disk (no editor shows the file). Raises EditorDeclined when the editor showing
        the file did not take the change: then nothing may be written at all."""
        ...


class EditorDeclined(Exception):
    """The editor showing a file refused a change, failed it, or did not confirm it.

    Nothing was written, and the caller must not fall back to the disk: the disk text
    would be computed from the buffer, so it would also save the user's unsaved text, and
    a "no" in the editor must stay a "no". ``reason`` is meant for the model.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DiskOnly:
    """The default DocumentSource: no editor, so every read and write goes to disk."""

    def read_text(self, path: Path) -> str | None:
        return None

    async def write_text(self, path: Path, text: str) -> bool:
        return False


class FileContentError(Exception):
    """A file exists but its content cannot be used as text (directory, binary, encoding).

    The message is meant for the model and names the file by its display path.
    """


def is_binary(data: bytes) -> bool:
    """NUL bytes never occur in text files we can usefully show or edit."""
    return b"\x00" in data


def load_text(documents: DocumentSource, path: Path, display: str) -> str | None:
    """Current text of ``path``: the editor buffer if open, else the file on disk.

    Returns None if the file does not exist (and is not open as an unsaved buffer).
    Raises FileContentError for directories, binary files and non-UTF-8 files: editing
    those as text would corrupt them. Decoding is strict and newlines are kept as-is
    (no universal-newline translation) so a write round-trips CRLF files unchanged.
    """
    buffer = documents.read_text(path)
    if buffer is not None:
        return buffer
    if path.is_dir():
        raise FileContentError(f"{display} is a directory, not a file.")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileContentError(f"Cannot read {display}: {exc.strerror or exc}.") from exc
    if is_binary(data):
        raise FileContentError(f"{display} is a binary file; only text files can be edited.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileContentError(
            f"{display} is not valid UTF-8 (byte {exc.start}); only UTF-8 text files can be edited."
        ) from exc


MAX_COMPARED_BYTES = 1_000_000


def project_text(workspace: Workspace, documents: DocumentSource, path: str) -> str | None:
    """The current text of the project file `path` names, as read_file would see it
    (buffer, then disk; confined and refused as for any tool), or None where read_file
    would fail or the file is over 1 MB. For comparing only: nothing is shown."""
    from invincat_server.runtime.policy.workspace import WorkspaceError

    try:
        resolved = workspace.resolve(path)
        if documents.read_text(resolved) is None and resolved.stat().st_size > MAX_COMPARED_BYTES:
            return None
        return load_text(documents, resolved, path)
    except (WorkspaceError, FileContentError, OSError, ValueError):
        return None


def write_disk(path: Path, text: str) -> None:
    """Write ``text`` to disk, creating parent directories.

    Written in place (not temp-file + rename) so the file keeps its permissions, owner
    and hard links; bytes are written so newlines are not translated.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


async def store_text(documents: DocumentSource, path: Path, text: str) -> bool:
    """Write through the editor if it shows the file, else to disk; True when the
    editor's buffer took it (the disk then changes only when the user saves).

    EditorDeclined propagates: a change the editor did not take is not written anywhere.
    Disk I/O is blocking, so it runs in a worker thread to keep the event loop (and the
    editor connection it serves) responsive.
    """
    if await documents.write_text(path, text):
        return True
    await asyncio.to_thread(write_disk, path, text)
    return False
