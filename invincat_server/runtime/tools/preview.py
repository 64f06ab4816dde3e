"""What a write_file / edit_file call would do, computed without doing it.

The approval layer shows the user this diff before the tool runs, and the tools
themselves use the same planning functions when they run, so what was approved and what
is written are computed the same way (re-read at execution time in case the file changed
in between).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.tools.copied_numbers import copied_line_numbers
from invincat_server.runtime.tools.copied_numbers import refusal as numbers_refusal
from invincat_server.runtime.tools.documents import DocumentSource, FileContentError, load_text
from invincat_server.runtime.tools.edit_hints import found_elsewhere
from invincat_server.runtime.tools.edits import (
    EditError,
    EditTextNotFound,
    apply_edit,
    unified_diff,
)
from invincat_server.runtime.tools.parse_check import broken_whole_file

__all__ = ["ProposedChange", "plan_edit", "plan_write", "preview_change"]


@dataclass(frozen=True)
class ProposedChange:
    """A file change a tool call would make."""

    path: str  # display path, relative to the workspace root
    abs_path: Path
    old_text: str | None  # None: the file does not exist yet
    new_text: str
    diff: str  # unified diff, "" if the content would not change


def plan_write(
    workspace: Workspace, documents: DocumentSource, path: str, content: str
) -> ProposedChange:
    """The change write_file(path, content) would make."""
    abs_path = workspace.resolve(path, write=True)
    display = workspace.relative(abs_path)
    try:
        old_text = load_text(documents, abs_path, display)
    except FileContentError as exc:
        if abs_path.is_dir():
            raise EditError(f"{display} is a directory; write_file needs a file path.") from exc
        # Overwriting a binary or non-UTF-8 file with text is almost always a mistake by
        # the model (wrong path), and the diff could not be shown for approval anyway.
        raise EditError(
            f"{display} exists and is not a UTF-8 text file; write_file will not overwrite "
            "it. Remove it first with execute if replacing it is really intended."
        ) from exc
    first = copied_line_numbers(content)
    if first is not None:
        raise EditError(numbers_refusal(display, "content", first))
    if old_text is not None and _same_but_final_newline(old_text, content):
        # Nothing to approve, and a model told "Wrote 5 lines" thinks it changed something:
        # Qwen2.5-Coder-1.5B, asked to fix calc.py, wrote test_calc.py back as it was, less
        # its final newline, and went on to the next read (bench run 20).
        raise EditError(
            f"{display} already holds exactly this content"
            + ("" if old_text == content else " (apart from its final newline)")
            + ": nothing to change, nothing was written. If the change belongs in another "
            "file, write or edit that file."
        )
    broken = None if old_text is None else broken_whole_file(abs_path, old_text, content)
    if broken is not None:
        raise EditError(f"{display} {broken}")
    return ProposedChange(
        path=display,
        abs_path=abs_path,
        old_text=old_text,
        new_text=content,
        diff=unified_diff(display, old_text, content),
    )


def _same_but_final_newline(old: str, new: str) -> bool:
    return old == new or old.rstrip("\r\n") == new.rstrip("\r\n")


def plan_edit(
    workspace: Workspace,
    documents: DocumentSource,
    path: str,
    old_string: str,
    new_string: str,
    replace_all: bool = False,
) -> tuple[ProposedChange, int]:
    """The change edit_file(...) would make, and how many replacements it makes."""
    abs_path = workspace.resolve(path, write=True)
    display = workspace.relative(abs_path)
    try:
        old_text = load_text(documents, abs_path, display)
    except FileContentError as exc:
        raise EditError(str(exc)) from exc
    if old_text is None:
        raise EditError(f"{display} does not exist; use write_file to create a new file.")
    first = copied_line_numbers(new_string)
    if first is not None:
        raise EditError(numbers_refusal(display, "new_string", first))
    try:
        new_text, count = apply_edit(old_text, old_string, new_string, replace_all, path=display)
    except EditTextNotFound as exc:
        elsewhere = found_elsewhere(workspace, documents, abs_path, old_string)
        if elsewhere is None:
            raise
        raise EditTextNotFound(
            f"old_string not found in {display}, but it occurs once in {elsewhere}: if that "
            "is the file you meant, send the edit again with that path"
        ) from exc
    change = ProposedChange(
        path=display,
        abs_path=abs_path,
        old_text=old_text,
        new_text=new_text,
        diff=unified_diff(display, old_text, new_text),
    )
    return change, count


def preview_change(
    workspace: Workspace, documents: DocumentSource, tool_name: str, args: Mapping[str, Any]
) -> ProposedChange | None:
    """For write_file / edit_file: what the file would become; None for other tools.

    Reads the editor buffer first, then disk. Raises WorkspaceError / EditError when the
    call cannot succeed, so the approval layer can skip asking and let the tool report
    the error itself.
    """
    if tool_name == "write_file":
        path = _str_arg(args, "path", tool_name)
        return plan_write(workspace, documents, path, _str_arg(args, "content", tool_name))
    if tool_name == "edit_file":
        replace_all = args.get("replace_all", False)
        if not isinstance(replace_all, bool):
            raise EditError("edit_file argument 'replace_all' must be true or false.")
        change, _count = plan_edit(
            workspace,
            documents,
            _str_arg(args, "path", tool_name),
            _str_arg(args, "old_string", tool_name),
            _str_arg(args, "new_string", tool_name),
            replace_all,
        )
        return change
    return None


def _str_arg(args: Mapping[str, Any], name: str, tool_name: str) -> str:
    # The approval layer sees raw model arguments, before the tool's schema validated
    # them, so a malformed call must fail here with a readable message, not a KeyError.
    value = args.get(name)
    if not isinstance(value, str):
        raise EditError(f"{tool_name} argument '{name}' is required and must be a string.")
    return value
