"""Requests a user is looking at go before the background import of the agent stack.

Right after `initialize` an editor asks for its memory and thread views while the agent
stack is being imported in a worker thread (lsp/host.py). Both are Python code sharing
one GIL, so each answer would take two to three times its own CPU time. The import
instead waits between modules while such a request is being answered; each wait is
capped, so a stream of requests can delay the first chat only by that much per module.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

MAX_WAIT_SECONDS = 0.25
"""The longest the import waits for the requests in flight, each time it waits."""

R = TypeVar("R")


class Foreground:
    """How many foreground requests are being answered; the import waits for none."""

    def __init__(self) -> None:
        self._busy = 0
        self._idle = threading.Condition()

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        with self._idle:
            self._busy += 1
        try:
            yield
        finally:
            with self._idle:
                self._busy -= 1
                if self._busy == 0:
                    self._idle.notify_all()

    def wait_idle(self, timeout: float = MAX_WAIT_SECONDS) -> bool:
        """Blocking (a worker thread): wait until no foreground request is in flight, at
        most `timeout` seconds; True if none is."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)


def foreground(
    fn: Callable[[Any, Any], Awaitable[R]],
) -> Callable[[Any, Any], Awaitable[R]]:
    """Mark a request handler `(ls, params)` as foreground (see the module docstring)."""

    @functools.wraps(fn)
    async def handler(ls: Any, params: Any) -> R:
        with ls.foreground.serving():
            return await fn(ls, params)

    return handler
