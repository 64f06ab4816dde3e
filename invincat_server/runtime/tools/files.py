"""read_file, write_file, edit_file and ls, plus the helpers every core tool shares."""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from pydantic import BaseModel, Field

from invincat_server.runtime.checkpoints import recorder as checkpoint_recorder
from invincat_server.runtime.policy.workspace import (
    ProtectedPathError,
    Workspace,
    WorkspaceError,
)
from invincat_server.runtime.tool_outcome import declined
from invincat_server.runtime.tools.documents import (
    DocumentSource,
    EditorDeclined,
    FileContentError,
    is_binary,
    store_text,
)
from invincat_server.runtime.tools.edits import EditError
from invincat_server.runtime.tools.parse_check import broken_by_write
from invincat_server.runtime.tools.preview import plan_edit, plan_write
from invincat_server.runtime.wording import plural

log = logging.getLogger("invincat.tools.files")

__all__ = ["build_file_tools", "make_tool", "tool_errors"]

MAX_LINE_CHARS = 2000
DEFAULT_READ_LIMIT = 2000
LS_MAX_ENTRIES = 1000


# --------------------------------------------------------------------------- shared helpers


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn the expected failures of a tool into ToolException.

    With handle_tool_error=True, langchain turns a ToolException into a ToolMessage with
    status="error" carrying the message, so the model sees what went wrong and can fix
    its call instead of the whole agent run failing. Anything else is a bug and is left
    to propagate.
    """
    try:
        yield
    except ToolException:
        raise
    except (WorkspaceError, EditError, FileContentError) as exc:
        raise ToolException(str(exc)) from exc
    except OSError as exc:
        target = f" ({exc.filename})" if exc.filename else ""
        raise ToolException(f"{exc.strerror or exc}{target}") from exc


def _declined(exc: EditorDeclined, display: str, tool_call_id: str, name: str) -> ToolMessage:
    return declined(
        f"The editor did not apply this change to {display}: {exc.reason} Nothing was "
        "written: the file on disk and the editor's buffer are unchanged. Do not retry it "
        "unchanged; ask the user how to proceed.",
        tool_call_id=tool_call_id,
        name=name,
    )


def _protected(exc: ProtectedPathError, tool_call_id: str, name: str) -> ToolMessage:
    # The protection refused the path: declined like a rejected call, not a failed one.
    return declined(str(exc), tool_call_id=tool_call_id, name=name)


def _format_validation_error(exc: Exception) -> str:
    # The default text is just "Tool input validation error", which gives the model
    # nothing to correct; name the field and the problem instead.
    try:
        problems = [
            f"{'.'.join(str(part) for part in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()  # type: ignore[attr-defined]
        ]
    except Exception:  # pydantic v1 style or unexpected shape: fall back to str()
        log.debug("validation error of unexpected shape: %r", exc, exc_info=True)
        return f"Invalid tool arguments: {exc}"
    return "Invalid tool arguments: " + "; ".join(problems)


def make_tool(
    name: str,
    description: str,
    args_schema: type[BaseModel],
    coroutine: Callable[..., Awaitable[str | ToolMessage]],
) -> StructuredTool:
    """A StructuredTool whose errors come back to the model as error ToolMessages."""
    return StructuredTool.from_function(
        coroutine=coroutine,
        name=name,
        description=description,
        args_schema=args_schema,
        infer_schema=False,
        handle_tool_error=True,
        handle_validation_error=_format_validation_error,
    )


def capped_listing(names: list[str], limit: int, overflow: Callable[[int], str]) -> str:
    """`names` sorted, one a line, at most `limit` of them, then `overflow(len(names))`
    saying what was left out: a listing never floods the model's context (ls, glob)."""
    shown = sorted(names)
    if len(shown) > limit:
        return "\n".join([*shown[:limit], overflow(len(shown))])
    return "\n".join(shown)


def count_lines(text: str) -> int:
    """Lines as an editor counts them: a trailing newline does not start a new line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def split_lines(text: str) -> list[str]:
    """Split on "\\n" only, dropping a trailing "\\r" so CRLF files display cleanly.

    str.splitlines would also split on form feeds and Unicode separators, making line
    numbers disagree with editors and with grep.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


# --------------------------------------------------------------------------- schemas


class ReadFileArgs(BaseModel):
    path: str = Field(description="File path, relative to the workspace root (or absolute).")
    offset: int = Field(
        default=0, ge=0, description="0-based index of the first line to show (0 = line 1)."
    )
    limit: int = Field(
        default=DEFAULT_READ_LIMIT, ge=1, description="Maximum number of lines to show."
    )
    tool_call_id: Annotated[str, InjectedToolCallId]


class WriteFileArgs(BaseModel):
    path: str = Field(description="File path, relative to the workspace root (or absolute).")
    content: str = Field(description="The complete new content of the file.")
    # Injected by the tool node, hidden from the model: a refusal is a ToolMessage.
    tool_call_id: Annotated[str, InjectedToolCallId]


class EditFileArgs(BaseModel):
    path: str = Field(description="File path, relative to the workspace root (or absolute).")
    old_string: str = Field(
        description="Exact text to replace, including whitespace and indentation, copied "
        "from read_file output without the line-number prefix."
    )
    new_string: str = Field(description="Text to put in its place.")
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence; otherwise old_string must occur exactly once.",
    )
    tool_call_id: Annotated[str, InjectedToolCallId]


class LsArgs(BaseModel):
    path: str = Field(default=".", description="Directory to list, relative to the workspace root.")
    tool_call_id: Annotated[str, InjectedToolCallId]


# --------------------------------------------------------------------------- read_file


def _read_disk(path: Path, display: str) -> str:
    if path.is_dir():
        raise ToolException(f"{display} is a directory, not a file; use ls to list it.")
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ToolException(
            f"File not found: {display}. Use ls or glob to find the right path."
        ) from exc
    if is_binary(data):
        raise ToolException(f"{display} is a binary file (contains NUL bytes); cannot show it.")
    # Lenient decoding for display: one odd byte should not hide a whole file from the
    # model. (edit_file decodes strictly so it never writes replacement characters back.)
    return data.decode("utf-8", errors="replace")


def format_numbered(text: str, display: str, offset: int, limit: int) -> str:
    """``cat -n`` style view of lines [offset, offset + limit) with truncation notes."""
    lines = split_lines(text)
    total = len(lines)
    if total == 0:
        return f"The file {display} is empty."
    if offset >= total:
        raise ToolException(
            f"offset {offset} is past the end of {display}, which has {plural(total, 'line')}."
        )
    end = min(offset + limit, total)
    out: list[str] = []
    for index in range(offset, end):
        line = lines[index]
        if len(line) > MAX_LINE_CHARS:
            extra = len(line) - MAX_LINE_CHARS
            line = f"{line[:MAX_LINE_CHARS]}... [line truncated, {extra} more characters]"
        out.append(f"{index + 1:>6}\t{line}")
    if end < total:
        out.append(
            f"... {plural(total - end, 'more line')} not shown ({display} has {total} lines). "
            f"Call read_file with offset={end} to continue."
        )
    return "\n".join(out)


# --------------------------------------------------------------------------- ls


def _list_dir(path: Path, display: str, workspace: Workspace | None = None) -> str:
    if not path.exists():
        raise ToolException(f"Directory not found: {display}.")
    if not path.is_dir():
        raise ToolException(f"{display} is a file, not a directory; use read_file to read it.")
    names: list[str] = []
    with os.scandir(path) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if workspace is not None and (
                (is_dir and entry.name == ".invincat")
                or (not is_dir and workspace.denied(Path(entry.path)))
            ):
                continue  # memory stores and their directory are not for the agent's eyes
            names.append(entry.name + "/" if is_dir else entry.name)
    if not names:
        return f"{display} is an empty directory."
    return capped_listing(
        names,
        LS_MAX_ENTRIES,
        lambda total: f"... and {total - LS_MAX_ENTRIES} more entries (use glob to narrow down).",
    )


# --------------------------------------------------------------------------- tools


async def _store_recorded(documents: DocumentSource, path: Path, text: str) -> None:
    """store_text, with the running turn's checkpoint taken first (the file as it was,
    or the editor's text when it is open there, for a rewind: runtime/checkpoints) and
    told what Invincat left there after."""
    await checkpoint_recorder.before_write(path, documents.read_text(path))
    in_editor = await store_text(documents, path, text)
    await checkpoint_recorder.after_write(path, on_disk=not in_editor)


class WriteTurns:
    """One write at a time: each reads the file after the write before it has stored.

    LangGraph runs the calls of one model response at once. A write reads the file (to
    plan an edit, or for the rewind checkpoint) and then awaits before it stores, so two
    edits of one file each read the original and the second store undid the first while
    both reported success (Qwen2.5-Coder-1.5B, bench run 19). Which of a response's writes
    goes first is not fixed (each call is its own graph task); that each result says what
    happened to the file is. Writes are rare and short, so one turn for all of them costs
    nothing. A lock per event loop: the same tools may serve more than one loop."""

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock


def build_file_tools(workspace: Workspace, documents: DocumentSource) -> list[BaseTool]:
    """read_file, write_file, edit_file and ls bound to one workspace and buffer source."""
    write_turn = WriteTurns()

    async def read_file(
        path: str, tool_call_id: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT
    ) -> str | ToolMessage:
        with tool_errors():
            try:
                abs_path = workspace.resolve(path)
            except ProtectedPathError as exc:
                return _protected(exc, tool_call_id, "read_file")
            display = workspace.relative(abs_path)
            text = documents.read_text(abs_path)
            if text is None:
                text = await asyncio.to_thread(_read_disk, abs_path, display)
            return format_numbered(text, display, offset, limit)

    async def write_file(path: str, content: str, tool_call_id: str) -> str | ToolMessage:
        async with write_turn():
            with tool_errors():
                try:
                    change = plan_write(workspace, documents, path, content)
                except ProtectedPathError as exc:
                    return _protected(exc, tool_call_id, "write_file")
                try:
                    await _store_recorded(documents, change.abs_path, content)
                except EditorDeclined as exc:
                    return _declined(exc, change.path, tool_call_id, "write_file")
                how = "new file" if change.old_text is None else "overwrote existing file"
                broke = broken_by_write(change.abs_path, change.path, change.old_text, content)
                lines = plural(count_lines(content), "line")
                return f"Wrote {lines} to {change.path} ({how}).{broke}"

    async def edit_file(
        path: str, old_string: str, new_string: str, tool_call_id: str, replace_all: bool = False
    ) -> str | ToolMessage:
        # Planned inside the turn: on the text the write before it left.
        async with write_turn():
            with tool_errors():
                try:
                    change, count = plan_edit(
                        workspace, documents, path, old_string, new_string, replace_all
                    )
                except ProtectedPathError as exc:
                    return _protected(exc, tool_call_id, "edit_file")
                try:
                    await _store_recorded(documents, change.abs_path, change.new_text)
                except EditorDeclined as exc:
                    return _declined(exc, change.path, tool_call_id, "edit_file")
                broke = broken_by_write(
                    change.abs_path, change.path, change.old_text, change.new_text
                )
                return f"Edited {change.path}: {plural(count, 'replacement')}.{broke}"

    async def ls(tool_call_id: str, path: str = ".") -> str | ToolMessage:
        with tool_errors():
            try:
                abs_path = workspace.resolve(path)
            except ProtectedPathError as exc:
                return _protected(exc, tool_call_id, "ls")
            return await asyncio.to_thread(
                _list_dir, abs_path, workspace.relative(abs_path), workspace
            )

    return [
        make_tool(
            "read_file",
            "Read a text file in the workspace. Output is numbered like `cat -n` "
            "(line number, tab, text). Reads up to `limit` lines (default 2000) starting "
            "at the 0-based line index `offset`; lines longer than 2000 characters are "
            "truncated. If the file is open in the editor, its unsaved text is shown. "
            "Read a file before editing it.",
            ReadFileArgs,
            read_file,
        ),
        make_tool(
            "write_file",
            "Create a file or overwrite it completely with `content`. Parent directories "
            "are created. Prefer edit_file to change part of an existing file.",
            WriteFileArgs,
            write_file,
        ),
        make_tool(
            "edit_file",
            "Replace an exact string in a file. `old_string` must match the file exactly "
            "(whitespace included, without read_file's line-number prefix) and must be "
            "unique unless `replace_all` is true; include surrounding lines to make it "
            "unique.",
            EditFileArgs,
            edit_file,
        ),
        make_tool(
            "ls",
            "List a directory in the workspace, sorted; subdirectories end with `/`.",
            LsArgs,
            ls,
        ),
    ]
