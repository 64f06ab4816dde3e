"""`@path` mentions in a prompt: which words name a workspace file to attach.

Split from editor_context.py (which renders what they attach); the fence languages live
here because the mention rule uses them to tell `notes.md` (a file) from `app.route`.
"""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path

from invincat_server.runtime.policy.workspace import Workspace, WorkspaceError

__all__ = ["FENCE_LANGUAGES", "MAX_NAMED_FILES", "Mention", "find_mentions", "find_named_files"]

FENCE_LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".jsx": "jsx",
    ".json": "json",
    ".md": "markdown",
    ".rs": "rust",
    ".go": "go",
    ".lua": "lua",
    ".sh": "bash",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".html": "html",
    ".css": "css",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".java": "java",
    ".rb": "ruby",
}


# `@` at the start or after whitespace or an opening bracket/quote, then either a quoted
# path or a run of path characters (brackets and quotes end it: `@app.route('/x')` is
# `app.route`). `foo@bar.com` never matches (a letter before `@`).
_MENTION = re.compile(r"""(?:^|(?<=[\s(\[{'"`]))@(?:"([^"\n]+)"|([^\s"'`()\[\]{}<>,;]+))""")
_TRAILING = ".,;:!?"
_EXTENSION = re.compile(r"\.([A-Za-z0-9_+-]{1,10})$")
# Code pasted into a prompt (a fenced block) is not a mention.
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)


def _has_file_extension(text: str) -> bool:
    """`notes.md`, `app.py`: an extension the stdlib's mimetypes table or our fence
    languages know. `app.route`, `functools.wraps` are decorators, not files."""
    match = _EXTENSION.search(text)
    if match is None:
        return False
    suffix = "." + match.group(1).lower()
    return suffix in FENCE_LANGUAGES or mimetypes.guess_type("x" + suffix)[0] is not None


@dataclass(frozen=True)
class Mention:
    text: str
    """The path as written (without `@` and quotes)."""
    path: Path | None
    """The resolved file, None when it cannot be attached (`problem` says why)."""
    problem: str | None = None
    named: bool = False
    """Named in the prose of the prompt without `@` (`find_named_files`), not mentioned."""


def find_mentions(prompt: str, workspace: Workspace) -> list[Mention]:
    """The `@path` mentions in `prompt`, each resolved or with the reason it is not.

    `@word` counts as a mention when the file exists in the workspace, or when it looks like
    a path (quoted, contains `/`, or ends in a known file extension such as `.py`);
    everything else (`@dataclass`, `@app.route`, `@alice`, an e-mail address) and anything
    inside a fenced code block is ordinary text and left alone."""
    found: list[Mention] = []
    seen: set[str] = set()
    for match in _MENTION.finditer(_FENCED.sub(" ", prompt)):
        quoted, bare = match.group(1), match.group(2)
        text = quoted if quoted is not None else bare.rstrip(_TRAILING)
        if not text or text in seen:
            continue
        looks_like_path = quoted is not None or "/" in text or _has_file_extension(text)
        try:
            path = workspace.resolve(text)
            is_file = path.is_file()
        except WorkspaceError as exc:
            if looks_like_path:
                seen.add(text)
                found.append(Mention(text, None, f"@{text} was not attached: {exc}"))
            continue
        except OSError as exc:  # a name longer than the file system allows
            seen.add(text)
            why = exc.strerror or "not a usable file name"
            found.append(Mention(text, None, f"@{text[:80]} was not attached: {why}."))
            continue
        if is_file:
            seen.add(text)
            found.append(Mention(text, path))
        elif looks_like_path:
            seen.add(text)
            why = "it is a directory, not a file" if path.is_dir() else "no such file"
            found.append(Mention(text, None, f"@{text} was not attached: {why} in the workspace."))
    return found


MAX_NAMED_FILES = 5
"""Files attached because the prompt names them without `@`: a prompt that lists a whole
folder attaches the first five, the model reads the others when it needs them."""

MAX_NAME_CHARS = 1024
"""A longer word is no file name (Linux caps a path's component at 255 bytes)."""

# A word of the prompt: a run without spaces, then the quotes, backticks and brackets
# around it and the sentence's punctuation after it stripped (`calc.py`, "(calc.py)").
_WORD = re.compile(r"[^\s]+")
_WRAPPING = "\"'`()[]{}<>*"


def find_named_files(prompt: str, workspace: Workspace, taken: set[Path]) -> list[Mention]:
    """Workspace files the prompt names in its prose, as `calc.py` or `src/app.py` in
    "fix the bug in calc.py": attached as if mentioned, so a model sees the file it was
    asked about instead of answering without reading it (small models do). Unlike an
    `@path` mention a name is often a file still to be written, so one that does not
    resolve to an existing workspace file (missing, a directory, outside the workspace,
    protected, a link leading out) is ordinary text and left out without a word.
    `taken`: files already attached (the `@` mentions), not attached twice."""
    found: list[Mention] = []
    seen = set(taken)
    for match in _WORD.finditer(_FENCED.sub(" ", prompt)):
        text = match.group(0).strip(_WRAPPING).rstrip(_TRAILING).strip(_WRAPPING)
        if (
            not text
            or len(text) > MAX_NAME_CHARS
            or text.startswith("@")
            or "://" in text
            or not _has_file_extension(text)
        ):
            continue
        try:
            path = workspace.resolve(text)
            if path in seen or not path.is_file():
                continue
        except (WorkspaceError, OSError, ValueError):  # a name too long, a NUL byte
            continue
        seen.add(path)
        found.append(Mention(text, path, named=True))
        if len(found) == MAX_NAMED_FILES:
            break
    return found
