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

__all__ = ["FENCE_LANGUAGES", "Mention", "find_mentions"]

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
        except WorkspaceError as exc:
            if looks_like_path:
                seen.add(text)
                found.append(Mention(text, None, f"@{text} was not attached: {exc}"))
            continue
        if path.is_file():
            seen.add(text)
            found.append(Mention(text, path))
        elif looks_like_path:
            seen.add(text)
            why = "it is a directory, not a file" if path.is_dir() else "no such file"
            found.append(Mention(text, None, f"@{text} was not attached: {why} in the workspace."))
    return found
