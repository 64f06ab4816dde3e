"""Importing the agent stack without full garbage collections.

Loading LangChain, LangGraph and the OpenAI SDK creates ~200,000 long-lived objects
(modules, classes, pydantic schemas). CPython's collector keeps rescanning them: while
they are imported it runs two or three full (generation 2) collections, and the first
turn pays another, each 35-110 ms on a quiet machine and several times that on a busy
one. None of them finds anything worth collecting (a few hundred objects): the imported
objects live as long as the process.

`bulk_import()` wraps such an import. Inside it, full collections are put off (young
generations are still collected, so the import's short-lived garbage is freed as
usual); at the end, everything alive is moved to the collector's permanent generation
(`gc.freeze()`), so later full collections scan only what was created since. This is
the use the `gc` documentation gives for `freeze` (a process that forks workers after
loading, as the warm chat server does); nothing is disabled for good, and garbage
created after the block is collected as before. The cost is that the few hundred
objects that were already garbage at the end of the block stay allocated.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_NO_FULL_COLLECTION = 1 << 30
"""Generation-2 threshold that is never reached while a block runs."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] | None = None


@contextmanager
def bulk_import() -> Iterator[None]:
    """Put off full collections while the block imports; freeze what it loaded.

    Safe to nest and to use from several threads at once: the collector's thresholds
    are restored and the heap frozen when the last block ends."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(_saved[0], _saved[1], _NO_FULL_COLLECTION)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.freeze()
                gc.set_threshold(*_saved)
                _saved = None
