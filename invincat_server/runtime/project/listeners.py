"""One place events fan out: each listener gets every event; one that fails is logged and
the others still get it (as esbonio loops over its features)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger("invincat.project")

E = TypeVar("E")


class Listeners(Generic[E]):
    """Subscribers to a feed of `E` (a turn event, a memory change)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._items: list[Callable[[E], None]] = []

    def add(self, listener: Callable[[E], None]) -> Callable[[], None]:
        """Subscribe; returns the call that unsubscribes."""
        self._items.append(listener)
        return lambda: self.remove(listener)

    def remove(self, listener: Callable[[E], None]) -> None:
        if listener in self._items:
            self._items.remove(listener)

    def __len__(self) -> int:
        return len(self._items)

    def emit(self, item: E) -> None:
        for listener in list(self._items):
            try:
                listener(item)
            except Exception:
                log.exception("a %s listener failed", self.name)
