"""What the main agent sees of memory before each model call (spec section 5).

User scope first, then project; per scope only active, valid, non-cold entries, hot then
warm, by score descending then id; at most 8 hot + 6 warm lines and 4,000 characters of
lines, never cutting a line. Each scope's entries are cached on its store file's
(mtime_ns, size, inode, ctime_ns): an unchanged store is not even opened.

Cited entries are checked before each render (`check`, cached by the cited files' stat):
an entry whose evidence changed or is gone is still injected, with a visible
`(may be stale: …)` note naming what changed, so the model weighs it against the
workspace; an entry whose text only moved is injected as usual.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from invincat_server.runtime.memory.limits import MemoryLimits
from invincat_server.runtime.memory.models import SCOPES, Entry, Scope
from invincat_server.runtime.memory.redaction import redact_text
from invincat_server.runtime.memory.staleness import EntryCheck

HEADING = (
    "## Long-term memory\n"
    "Durable facts from earlier sessions, kept under governance. When one disagrees with "
    "what you see in the workspace, trust the workspace."
)
_SCOPE_TITLES: dict[Scope, str] = {"user": "### User", "project": "### Project"}

StatKey = tuple[int, int, int, int] | None


def entry_line(entry: Entry, note: str | None = None) -> str:
    line = f"- [{entry.section}] {entry.content}"
    return f"{line} ({note})" if note else line


def select_lines(
    entries: Iterable[Entry], limits: MemoryLimits, notes: dict[str, str] | None = None
) -> list[str]:
    """The lines one scope contributes, in order, within the caps (`notes` by entry id)."""
    eligible = sorted(
        (e for e in entries if e.injectable),
        key=lambda e: (e.tier != "hot", -e.score, e.id),
    )
    caps = {"hot": limits.inject_hot, "warm": limits.inject_warm}
    taken: Counter[str] = Counter()
    lines: list[str] = []
    used = 0
    for entry in eligible:
        if taken[entry.tier] >= caps[entry.tier]:
            continue
        # Entries are redacted when governance writes them; a hand edit or a pull is not
        # (it is accepted as it is), so redact again before the text reaches the model.
        line = redact_text(entry_line(entry, (notes or {}).get(entry.id)))
        cost = len(line) + 1  # the newline
        if used + cost > limits.inject_chars:
            break  # whole lines only, and never let a lower-ranked line jump the queue
        lines.append(line)
        used += cost
        taken[entry.tier] += 1
    return lines


def stat_key(path: Path) -> StatKey:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


class InjectionRenderer:
    """Renders the memory block, re-reading a store only when it changed (`key`: the
    store file's stat, or the database row's hash; StoreWriter.change_key).

    `reads` counts store reads per scope so tests (and curious people) can see that an
    unchanged store costs a `stat` and nothing more.
    """

    def __init__(
        self,
        key: Callable[[Scope], object],
        read: Callable[[Scope], list[Entry]],
        limits: MemoryLimits,
        check: Callable[[Entry], EntryCheck | None] | None = None,
    ) -> None:
        self._key = key
        self._read = read
        self._limits = limits
        self._check = check
        self._entries: dict[Scope, tuple[object, list[Entry]]] = {}
        self._cache: dict[Scope, tuple[object, list[str]]] = {}
        self._lock = threading.Lock()
        self.reads: Counter[str] = Counter()

    def _scope_lines(self, scope: Scope) -> list[str]:
        # stat before reading: if the file changes in between, the next call sees a new
        # key and reads again; the other order could cache old content under a new key.
        key = self._key(scope)
        known = self._entries.get(scope)
        if known is None or known[0] != key:
            eligible = [e for e in self._read(scope) if e.injectable] if key is not None else []
            if key is not None:
                self.reads[scope] += 1
            known = (key, eligible)
            self._entries[scope] = known
        notes = self._notes(known[1])
        render_key = (key, tuple(sorted(notes.items())))
        cached = self._cache.get(scope)
        if cached is not None and cached[0] == render_key:
            return cached[1]
        lines = select_lines(known[1], self._limits, notes)
        self._cache[scope] = (render_key, lines)
        return lines

    def _notes(self, entries: list[Entry]) -> dict[str, str]:
        """`may be stale` notes of cited entries (a stat per cited file when unchanged)."""
        if self._check is None:
            return {}
        notes: dict[str, str] = {}
        for entry in entries:
            if not entry.citations:
                continue
            verdict = self._check(entry)
            note = verdict.note() if verdict is not None else None
            if note:
                notes[entry.id] = note
        return notes

    def render(self) -> str:
        """The system-prompt block, or "" when no scope has anything to inject."""
        with self._lock:
            parts = []
            for scope in SCOPES:
                lines = self._scope_lines(scope)
                if lines:
                    parts.append(_SCOPE_TITLES[scope] + "\n" + "\n".join(lines))
        if not parts:
            return ""
        return HEADING + "\n\n" + "\n\n".join(parts) + "\n"
