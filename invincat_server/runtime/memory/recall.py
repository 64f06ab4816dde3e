"""Lexical recall over stored entries: what `search_memory` ranks.

Okapi BM25 over each entry's section and content, hand-written on purpose: a store holds
at most a few hundred short entries per scope, so an index library would add a dependency
and start-up cost for no measurable gain. Archived entries are searched too (they are what
the injection caps and archiving leave out) but rank a little below an equally matching
active one; entries marked invalid are never returned.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from invincat_server.runtime.memory.models import Entry

K1, B = 1.2, 0.75
ARCHIVED_WEIGHT = 0.8
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def tokens(text: str) -> list[str]:
    """Lower-case words; CJK runs also count char by char (they have no spaces)."""
    found: list[str] = []
    for word in _WORD.findall(text.lower()):
        found.append(word)
        if _CJK.search(word) and len(word) > 1:
            found.extend(char for char in word if _CJK.match(char))
    return found


@dataclass(frozen=True)
class Hit:
    entry: Entry
    score: float


def rank(entries: Iterable[Entry], query: str, limit: int) -> list[Hit]:
    """The best `limit` entries for `query`, best first (ties: higher entry score, id)."""
    wanted = set(tokens(query))
    if not wanted:
        return []
    docs: list[tuple[Entry, Counter[str], int]] = []
    for entry in entries:
        if entry.invalid is not None:
            continue
        words = tokens(f"{entry.section} {entry.content}")
        docs.append((entry, Counter(words), len(words)))
    if not docs:
        return []
    average = sum(length for _, _, length in docs) / len(docs) or 1.0
    frequency = Counter(word for _, counts, _ in docs for word in wanted if word in counts)
    hits = []
    for entry, counts, length in docs:
        score = 0.0
        for word in wanted:
            tf = counts.get(word, 0)
            if not tf:
                continue
            n = frequency[word]
            idf = math.log(1 + (len(docs) - n + 0.5) / (n + 0.5))
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))
        if score > 0:
            weight = ARCHIVED_WEIGHT if entry.status == "archived" else 1.0
            hits.append(Hit(entry, score * weight))
    hits.sort(key=lambda h: (-h.score, -h.entry.score, h.entry.id))
    return hits[:limit]


def describe(hits: Sequence[Hit], notes: dict[str, str]) -> str:
    """One line per hit, as the agent reads them."""
    lines = []
    for hit in hits:
        e = hit.entry
        state = e.status if e.status == "archived" else f"{e.tier} {e.score}"
        note = f"; {notes[e.id]}" if e.id in notes else ""
        lines.append(f"{e.id} [{e.scope}/{e.section}] ({state}{note}) {e.content}")
    return "\n".join(lines)
