"""Files an answer shows in a code fence, named by the fence: what a model that edits in
prose calls its change.

Asked to fix a bug, Qwen2.5-Coder-1.5B answered "Here's the corrected `calc.py`:" and a
fence holding the fixed file (or a fence opening with `# File calc.py`), and made no tool
call: the turn ended with nothing written, three times of three (bench run 25). This finds
such fences; whether one differs from the file (`is_quote`) and what is then asked
(agents/text_tool_call_middleware.py) are decided by the caller, which reads the file.

Pure: no file is read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
_PATH = r"[\w][\w./-]*\.[A-Za-z0-9]{1,10}"
# A fence's first line naming its file: `# calc.py`, `# File calc.py`, `// file: a.js`,
# `<!-- index.html -->`, `-- query.sql`, `/* x.c */`.
_MARKER = re.compile(
    rf"^\s*(?:#|//|--|;|/\*|<!--)\s*(?:file(?:name)?\s*:?\s*)?`?({_PATH})`?\s*(?:\*/|-->)?\s*$",
    re.IGNORECASE,
)
# The line before a fence naming its file, and ending in a colon: "Here's the corrected
# `calc.py`:", "**calc.py**:", "calc.py:".
_LEAD = re.compile(rf"(?:`({_PATH})`|\*\*({_PATH})\*\*|(?<![\w/.])({_PATH}))")
# Fences that quote prose or output, not a file's source.
_NOT_SOURCE = frozenset({"text", "txt", "plain", "plaintext", "log", "console", "output", "diff"})
MAX_FENCES = 16


@dataclass(frozen=True)
class ShownFile:
    path: str
    body: str
    """The fence's text, without a first line that only names the file."""


def shown_files(text: str) -> list[ShownFile]:
    """The fences of `text` that name a file, by a first-line comment or by the line just
    before the fence (which must end in a colon and name one file), in order."""
    found: list[ShownFile] = []
    for match in _FENCE.finditer(text):
        if len(found) >= MAX_FENCES:
            break
        language, body = match.group(1).strip().lower(), match.group(2)
        if language in _NOT_SOURCE:
            continue
        first, _, rest = body.partition("\n")
        marker = _MARKER.match(first)
        if marker is not None:
            found.append(ShownFile(marker.group(1), rest))
            continue
        path = _lead_path(text[: match.start()])
        if path is not None:
            found.append(ShownFile(path, body))
    return found


def _lead_path(before: str) -> str | None:
    lines = before.rstrip().splitlines()
    lead = lines[-1].strip() if lines else ""
    if not lead.endswith(":"):
        return None
    paths = {next(p for p in m.groups() if p) for m in _LEAD.finditer(lead)}
    return paths.pop() if len(paths) == 1 else None


def is_quote(body: str, current: str) -> bool:
    """Whether `body` only quotes `current`: each of its non-blank lines is a line of
    `current`, in the same order (a part of the file, or all of it, unchanged)."""
    lines = iter(line.rstrip() for line in current.splitlines())
    return all(
        any(line == wanted for line in lines)
        for wanted in (raw.rstrip() for raw in body.splitlines())
        if wanted.strip()
    )
