"""Where the text of a failed edit is, when it is not in the file the model named.

A small model mixes up the files of one task: Qwen2.5-Coder-1.5B, asked to fix calc.py so
that test_calc.py passes, sent the right edit (`return a - b` → `return a + b`) with the
path test_calc.py (bench run 15), and "old_string not found" alone sent it off rereading
the test. Naming the one sibling file that holds the text gets the edit to the right file;
the edit itself is still made, and approved, only on the path the model then sends.

Only the files beside the target are looked at, each through `Workspace.resolve` (so a
protected file or a memory store is never read), without following links, and within
fixed limits: this runs on every failed edit and must stay cheap.
"""

from __future__ import annotations

import os
from pathlib import Path

from invincat_server.runtime.policy.workspace import Workspace, WorkspaceError
from invincat_server.runtime.tools.documents import DocumentSource, FileContentError, load_text

__all__ = ["found_elsewhere"]

MAX_SIBLINGS = 64
MAX_SIBLING_BYTES = 256 * 1024


def found_elsewhere(
    workspace: Workspace, documents: DocumentSource, target: Path, old_string: str
) -> str | None:
    """The workspace path of the one file beside `target` that holds `old_string` exactly
    once, or None (none, several, or too many files to look through)."""
    try:
        with os.scandir(target.parent) as entries:
            siblings = sorted(
                (e for e in entries if e.is_file(follow_symlinks=False)), key=lambda e: e.name
            )
    except OSError:
        return None
    if len(siblings) > MAX_SIBLINGS:
        return None
    holders = []
    for entry in siblings:
        if (
            entry.path == str(target)
            or entry.stat(follow_symlinks=False).st_size > MAX_SIBLING_BYTES
        ):
            continue
        text = _text(workspace, documents, Path(entry.path))
        if text is not None and text.count(old_string) == 1:
            holders.append(workspace.relative(Path(entry.path)))
    return holders[0] if len(holders) == 1 else None


def _size(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat(follow_symlinks=False).st_size
    except OSError:
        return MAX_SIBLING_BYTES + 1  # gone or unreadable: not looked at


def _text(workspace: Workspace, documents: DocumentSource, path: Path) -> str | None:
    try:
        resolved = workspace.resolve(workspace.relative(path))
    except WorkspaceError:
        return None  # protected, a memory store, or out of the workspace
    if resolved != path:
        return None  # a link (a hard one resolves the same; resolve refuses stores)
    try:
        return load_text(documents, resolved, workspace.relative(resolved))
    except (FileContentError, OSError):
        return None
