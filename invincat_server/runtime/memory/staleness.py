"""Is an entry's cited evidence still there? Checked before every injection, cheaply.

Each citation's verdict is cached on its file's stat key (mtime_ns, size, inode,
ctime_ns): when nothing changed, a check costs one `os.stat` per cited file and a dict
lookup. Only a file whose stat changed is read and re-hashed.

Verdicts:
- `fresh`: the cited lines hash as recorded;
- `moved`: the same text (same hash) is found at other lines of the file (the range is
  re-anchored: the nearest match to the old range wins), or, when the file is gone, in
  another file of the project (a rename);
- `changed`: the file is there but the cited text is not (edited, or the range is past
  its end);
- `missing`: the file is gone (or no longer a readable text file) and the text was not
  found elsewhere.
`changed` and `missing` make the entry stale.

No pydantic here: the rule works on any `CitedRange`, the service's `Citation` model or
the quick reader's `PlainCitation` (citation_text.py), so `memory list|show` give the same
verdicts through both read paths (issue 15).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, Self

from invincat_server.runtime.memory.citation_text import read_lines, text_hash

CheckState = Literal["fresh", "moved", "changed", "missing"]
StatKey = tuple[int, int, int, int] | None

# A rename search walks the project once per missing file: bounded so a huge tree costs
# at most this many small files, and only on the slow path (the cited file is gone).
RENAME_SEARCH_MAX_FILES = 5_000
RENAME_SEARCH_MAX_BYTES = 512 * 1024
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", ".invincat"})


class CitedRange(Protocol):
    """What the check needs of a citation (`Citation` and `PlainCitation` both are one)."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def sha256(self) -> str: ...
    @property
    def anchor(self) -> str: ...
    def label(self) -> str: ...
    def moved_to(self, path: str, start_line: int, end_line: int) -> Self: ...
    def to_json(self) -> dict[str, Any]: ...


def stat_key(path: Path) -> StatKey:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL byte (the models refuse those)
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


@dataclass(frozen=True)
class CitationCheck:
    citation: CitedRange
    state: CheckState
    current: CitedRange | None = None
    """For `moved`: where the text is now (path, lines, same hash)."""
    change: str | None = None
    """For anything but `fresh`: what happened, in words for the model and the user."""

    @property
    def stale(self) -> bool:
        return self.state in ("changed", "missing")

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "citation": self.citation.to_json(),
            "state": self.state,
        }
        if self.current is not None:
            data["current"] = self.current.to_json()
        if self.change:
            data["change"] = self.change
        return data


@dataclass(frozen=True)
class EntryCheck:
    entry_id: str
    checks: tuple[CitationCheck, ...]

    @property
    def stale(self) -> bool:
        return any(c.stale for c in self.checks)

    @property
    def moved(self) -> bool:
        return any(c.state == "moved" for c in self.checks)

    @property
    def state(self) -> str:
        return "stale" if self.stale else "moved" if self.moved else "fresh"

    def note(self) -> str | None:
        """`may be stale: …` naming what changed, or None when nothing is stale."""
        changes = [c.change for c in self.checks if c.stale and c.change]
        return ("may be stale: " + "; ".join(changes)) if changes else None

    def reanchored(self) -> list[CitedRange]:
        """The citations with moved ones at their new place."""
        return [c.current if c.state == "moved" and c.current else c.citation for c in self.checks]

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "id": self.entry_id,
            "state": self.state,
            "stale": self.stale,
            "citations": [c.to_json() for c in self.checks],
        }
        note = self.note()
        if note:
            data["note"] = note
        return data


def _find_window(lines: list[str], citation: CitedRange) -> int | None:
    """0-based start of the cited text in `lines`, nearest to the old range, or None.

    Only windows that contain a line matching the anchor are hashed, so a search costs
    (anchor matches) x (range length) line joins, not the whole file.
    """
    size = citation.end_line - citation.start_line + 1
    anchor = citation.anchor
    if not anchor or size > len(lines):
        return None
    starts: set[int] = set()
    for index, line in enumerate(lines):
        if anchor in " ".join(line.split()):
            starts.update(range(max(0, index - size + 1), min(index, len(lines) - size) + 1))
    old = citation.start_line - 1
    for start in sorted(starts, key=lambda s: (abs(s - old), s)):
        if text_hash(lines[start : start + size]) == citation.sha256:
            return start
    return None


def _project_files(root: Path, suffix: str) -> Iterator[Path]:
    """Files to look in for a renamed file: same suffix first is the caller's job."""
    seen = 0
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            seen += 1
            if seen > RENAME_SEARCH_MAX_FILES:
                return
            if suffix and not name.endswith(suffix):
                continue
            yield Path(directory) / name


class StalenessChecker:
    """Checks citations against the files under `root`, caching by file stat."""

    def __init__(self, root: Path, allowed: Callable[[str], str | None] | None = None) -> None:
        """`allowed(path)` says why a cited path may not be read (outside the project,
        protected memory data), or None. A store comes from git too, so its citations are
        untrusted: a path it refuses is never opened, and the entry is stale."""
        self.root = Path(root)
        self._allowed = allowed
        self._root_str = str(self.root)
        self._verdicts: dict[tuple[str, int, int, str], tuple[StatKey, CitationCheck]] = {}
        # The fast path: per entry, its citations and their files' stat keys at the last
        # check. When both match, the entry's verdict is reused without building anything.
        self._entries: dict[str, tuple[Sequence[CitedRange], tuple[StatKey, ...], EntryCheck]] = {}
        self._abs: dict[str, str] = {}
        self._lock = threading.Lock()
        self.reads = 0
        """Files read to check citations (tests and the benchmark look at it)."""

    def check_citation(self, citation: CitedRange) -> CitationCheck:
        key = stat_key(self.root / citation.path)
        cache_key = (citation.path, citation.start_line, citation.end_line, citation.sha256)
        with self._lock:
            cached = self._verdicts.get(cache_key)
        if cached is not None and cached[0] == key:
            return cached[1]
        verdict = self._compute(citation, key)
        with self._lock:
            self._verdicts[cache_key] = (key, verdict)
        return verdict

    def _stat(self, relative: str) -> StatKey:
        path = self._abs.get(relative)
        if path is None:
            path = self._abs[relative] = os.path.join(self._root_str, relative)
        try:
            st = os.stat(path)
        except (OSError, ValueError):  # ValueError: a NUL byte (the models refuse those)
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)

    def check(self, entry_id: str, citations: Sequence[CitedRange]) -> EntryCheck | None:
        if not citations:
            return None
        keys = tuple(self._stat(c.path) for c in citations)
        cached = self._entries.get(entry_id)
        if cached is not None and cached[1] == keys:
            if cached[0] is citations or cached[0] == citations:
                return cached[2]
        verdict = EntryCheck(entry_id, tuple(self.check_citation(c) for c in citations))
        with self._lock:
            self._entries[entry_id] = (citations, keys, verdict)
        return verdict

    def _compute(self, citation: CitedRange, key: StatKey) -> CitationCheck:
        refused = self._allowed(citation.path) if self._allowed is not None else None
        if refused is not None:
            return CitationCheck(citation, "missing", None, refused)
        lines = read_lines(self.root / citation.path) if key is not None else None
        self.reads += 1
        if lines is None:
            elsewhere = self._search_renamed(citation)
            if elsewhere is not None:
                return CitationCheck(
                    citation,
                    "moved",
                    elsewhere,
                    f"{citation.label()} moved to {elsewhere.label()}",
                )
            what = "was deleted" if key is None else "is no longer a readable text file"
            return CitationCheck(citation, "missing", None, f"{citation.path} {what}")
        start, end = citation.start_line, citation.end_line
        if end <= len(lines) and text_hash(lines[start - 1 : end]) == citation.sha256:
            return CitationCheck(citation, "fresh")
        found = _find_window(lines, citation)
        if found is not None:
            current = citation.moved_to(citation.path, found + 1, found + 1 + end - start)
            return CitationCheck(
                citation, "moved", current, f"{citation.label()} moved to {current.label()}"
            )
        if end > len(lines):
            change = f"{citation.path} now has {len(lines)} lines; {citation.label()} are gone"
        else:
            change = f"{citation.label()} changed"
        return CitationCheck(citation, "changed", None, change)

    def _search_renamed(self, citation: CitedRange) -> CitedRange | None:
        """The cited text in another file of the project (a rename or move), or None."""
        if not citation.anchor:
            return None
        suffix = Path(citation.path).suffix
        # A cheap byte test first: the anchor's longest word must be in the file.
        needle = max(citation.anchor.split(), key=len).encode("utf-8")
        for candidate in _project_files(self.root, suffix):
            try:
                if candidate.stat().st_size > RENAME_SEARCH_MAX_BYTES:
                    continue
                if needle not in candidate.read_bytes():
                    continue
            except OSError:
                continue
            lines = read_lines(candidate)
            if lines is None:
                continue
            found = _find_window(lines, citation)
            if found is not None:
                size = citation.end_line - citation.start_line
                return citation.moved_to(
                    candidate.relative_to(self.root).as_posix(), found + 1, found + 1 + size
                )
        return None
