"""The pydantic-free core of citations: hashing cited lines, reading cited files, which
paths may be cited, and a citation as plain data.

Both read paths use it: the service's models (citations.py wraps it in `Citation` and
`CitationResolver`) and the quick reader (reader.py), which must show a cited entry's
`stale`/`verification` without importing pydantic (issue 15). The staleness rule itself
(staleness.py) works on either form through `staleness.CitedRange`, so there is one rule.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from invincat_server.runtime.memory.schema import path_is_nameable

MAX_CITATIONS = 5
MAX_CITED_LINES = 200
ANCHOR_CHARS = 120
MAX_CITED_FILE_BYTES = 2 * 1024 * 1024


def citation_label(citation: dict[str, Any]) -> str:
    """`Citation.label()` of a citation dict (the terminal prints it; Citation uses it)."""
    path, start, end = citation["path"], citation["start_line"], citation["end_line"]
    return f"{path} line {start}" if start == end else f"{path} lines {start}-{end}"


def text_hash(lines: Sequence[str]) -> str:
    """sha256 of the cited lines joined by `\\n` (line endings and trailing blanks ignored,
    so a CRLF checkout or an editor trimming spaces does not make evidence stale)."""
    import hashlib  # here, not at the top: a read of an uncited store never hashes (2 ms)

    joined = "\n".join(line.rstrip() for line in lines)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def anchor_of(lines: Sequence[str]) -> str:
    for line in lines:
        text = " ".join(line.split())
        if text:
            return text[:ANCHOR_CHARS]
    return ""


def read_lines(path: Path) -> list[str] | None:
    """A text file's lines, or None when it is missing, not a file, too big or binary."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CITED_FILE_BYTES + 1)
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None
    if len(data) > MAX_CITED_FILE_BYTES or b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace").splitlines()


class CitationPaths:
    """Which paths may be cited, or read to check a citation: inside the project and not
    protected memory data. A store comes from git too, so its citations are untrusted."""

    def __init__(self, project_root: Path, is_protected: Callable[[Path], bool]) -> None:
        self.root = Path(project_root)
        self._real_root = Path(os.path.realpath(self.root))
        self._is_protected = is_protected

    @property
    def real_root(self) -> Path:
        return self._real_root

    def refusal(self, raw: str) -> str | None:
        """Why `raw` may not be cited (or read for a citation), or None."""
        return self.relative(raw)[1]

    def relative(self, raw: str) -> tuple[str | None, str | None]:
        """(project-relative POSIX path, None) or (None, why it is refused)."""
        if not path_is_nameable(raw):
            return None, "citation path contains a NUL byte"
        candidate = Path(raw)
        absolute = candidate if candidate.is_absolute() else self.root / candidate
        real = Path(os.path.realpath(absolute))
        if not real.is_relative_to(self._real_root):
            return None, f"citation path {raw!r} is outside the project"
        if self._is_protected(absolute) or self._is_protected(real):
            return None, f"citation path {raw!r} is protected memory data"
        return real.relative_to(self._real_root).as_posix(), None


class PlainCitation:
    """A stored citation as the dict `Citation.model_dump(mode="json")` gives (declared
    fields in order, then unknown ones), with the few methods the staleness check uses."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    @property
    def path(self) -> str:
        return str(self._data["path"])

    @property
    def start_line(self) -> int:
        return int(self._data["start_line"])

    @property
    def end_line(self) -> int:
        return int(self._data["end_line"])

    @property
    def sha256(self) -> str:
        return str(self._data["sha256"])

    @property
    def anchor(self) -> str:
        return str(self._data["anchor"])

    def label(self) -> str:
        return citation_label(self._data)

    def moved_to(self, path: str, start_line: int, end_line: int) -> PlainCitation:
        """As `Citation.moved_to`: the same citation (unknown fields too) at another place."""
        return PlainCitation(
            {**self._data, "path": path, "start_line": start_line, "end_line": end_line}
        )

    def to_json(self) -> dict[str, Any]:
        return dict(self._data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlainCitation) and other._data == self._data

    __hash__ = None  # type: ignore[assignment]  # mutable data, like a dict
