"""Attachments a client names by URI, one item at a time (ACP's embedded resources and
resource links), as `EditorContext` attachments.

Each item is confined on its own through the session's `Workspace` (the file tools'
check: inside the root after symlinks, not protected). An item that cannot be used — a
file outside the project, a symlink leading out of it, a protected file, a URI that is
not a `file:` one, binary content — costs that item only: it becomes a note the model and
the user are told (`EditorContext.notes`), and nothing of it is read or shown. The text a
client sends with an item is still capped and redacted by editor_context.py like a file
it reads.

The language server refuses a whole request for such a uri instead (its `context` is
validated as params, lsp/chat_context.py); a chat client's attachments are part of what
the user typed, so the rest of the prompt still goes.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from invincat_server.runtime.editor_context import Attachment, EditorContext, LineRange
from invincat_server.runtime.memory.redaction import redact_text
from invincat_server.runtime.policy.workspace import Workspace, WorkspaceError

__all__ = ["add_attachment", "add_note", "file_uri_path", "uri_line_range"]

MAX_SHOWN_URI_CHARS = 200
"""A URI named in a note is cut here (a client could send a huge one)."""

# Zed and others name a selection as `file:///a.py#L10:20` or `#L10-L20` (1-based lines).
_LINES = re.compile(r"^L(\d{1,9})(?:[:-]L?(\d{1,9}))?$")


def file_uri_path(uri: str) -> Path | None:
    """The absolute path a `file:` URI names (not resolved yet), None for other schemes
    or a URI with no absolute path."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    path = unquote(parsed.path)
    return Path(path) if path.startswith("/") else None


def uri_line_range(uri: str) -> LineRange | None:
    """The whole lines a `#L10:20`-style fragment names, None without one."""
    match = _LINES.match(urlparse(uri).fragment)
    if match is None:
        return None
    start = max(1, int(match.group(1)))
    end = max(start, int(match.group(2) or start))
    # Whole lines: column 0 of the line after the last (LineRange.label counts it so).
    return LineRange(start - 1, 0, end, 0)


def _shown(uri: str) -> str:
    shown = uri.replace("\x00", "\\0")
    return shown if len(shown) <= MAX_SHOWN_URI_CHARS else shown[:MAX_SHOWN_URI_CHARS] + "…"


def add_note(context: EditorContext, uri: str, why: str) -> None:
    """Say that the item at `uri` is not attached, and why."""
    # A URI may carry a token (`?key=…`): redacted like everything that reaches the model.
    context.notes.append(redact_text(f"Attachment {_shown(uri)} was not attached: {why}"))


def add_attachment(
    context: EditorContext, workspace: Workspace, uri: str, text: str | None = None
) -> None:
    """Attach the workspace file `uri` names — with the client's `text` of it when it sent
    one, else read like any context file (the editor's buffer, then the disk) — or note
    why it cannot be."""
    path = file_uri_path(uri)
    if path is None:
        add_note(context, uri, "only file: URIs of files in the workspace can be attached.")
        return
    try:
        real = workspace.resolve(str(path))
    except WorkspaceError as exc:
        add_note(context, uri, str(exc))
        return
    if text is None and not real.is_file():
        why = "it is a directory, not a file." if real.is_dir() else "no such file."
        add_note(context, uri, why)
        return
    context.attachments.append(Attachment(real, uri_line_range(uri), "attachment", text))
