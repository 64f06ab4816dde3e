"""How long a test waits for something that should happen.

The suite runs on machines shared by many test runs (two cores, load 10 and more): an
event that takes 50 ms alone can take tens of seconds there. A deadline is only there to
fail a test that is really stuck, so it is generous, and tests wait for the event itself
(a message, a state, a process ending), never for a fixed sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable

DEADLINE = 90.0
"""Seconds to wait for an event before the test fails."""


def eventually(condition: Callable[[], object], timeout: float = DEADLINE) -> bool:
    """True as soon as `condition()` is truthy, False if it is not within `timeout`. For
    state with no event of its own (a process starting or ending): the short poll is the
    wait, the deadline only fails a stuck test."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True
