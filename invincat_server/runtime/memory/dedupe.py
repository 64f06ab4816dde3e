"""Near-duplicate detection for creates (spec section 4.5).

Two facts are the same when their normalised token sets overlap with a Jaccard index of
at least 0.85: case, whitespace, punctuation and word order do not make a new fact.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

JACCARD_THRESHOLD = 0.85
_NON_WORD = re.compile(r"[^\w]+|_+")


def normalise(text: str) -> str:
    """Casefolded, punctuation turned into spaces, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NON_WORD.sub(" ", text).split())


@lru_cache(maxsize=32_768)
def token_set(text: str) -> frozenset[str]:
    # Cached: the same stored contents are compared against every create of every batch.
    return frozenset(normalise(text).split())


class DuplicateIndex:
    """Token sets of the candidates, computed once per batch and searched per create."""

    def __init__(
        self, candidates: Iterable[tuple[str, str]] = (), threshold: float = JACCARD_THRESHOLD
    ) -> None:
        self.threshold = threshold
        self._items: list[tuple[str, frozenset[str]]] = []
        for key, content in candidates:
            self.add(key, content)

    def add(self, key: str, content: str) -> None:
        self._items.append((key, token_set(content)))

    def find(self, content: str) -> tuple[str, float] | None:
        """The best `(key, similarity)` at or above the threshold, else None."""
        tokens = token_set(content)
        size = len(tokens)
        # Jaccard <= min/max of the set sizes: skip candidates that cannot reach it.
        low, high = size * self.threshold, size / self.threshold
        best: tuple[str, float] | None = None
        for key, other in self._items:
            other_size = len(other)
            if not low <= other_size <= high:
                continue
            shared = len(tokens & other)
            union = size + other_size - shared
            similarity = shared / union if union else 1.0
            if similarity >= self.threshold and (best is None or similarity > best[1]):
                best = (key, similarity)
        return best
