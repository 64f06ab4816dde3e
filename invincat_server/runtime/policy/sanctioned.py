"""Changes Invincat itself made to its settings files, so the tamper watch can tell them
from a tool's.

A tool call can legitimately overlap a settings write of this process: a subagent run by
`task` asks for approvals, and an "always" answer adds a rule to `approvals.json` while the
outer `task` call is still running. Writers record each (before, after) content hash here;
the watch accepts a change only if such records chain the snapshot's hash to the file's
current hash (like governed memory batches chain journal hashes). Process-local: a change
made by another Invincat process during a tool call is treated as tampering (documented).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

_lock = threading.Lock()
_transitions: dict[str, dict[str | None, set[str | None]]] = {}


def digest(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _key(path: Path) -> str:
    # Writers and the watch may spell the home differently (relative, through a symlink).
    return os.path.realpath(path)


def record(path: Path, before: bytes | None, after: bytes | None) -> None:
    """Note that this process changed `path` from `before` to `after` (None: no file)."""
    with _lock:
        steps = _transitions.setdefault(_key(path), {})
        steps.setdefault(digest(before), set()).add(digest(after))


def explains(path: Path, before: bytes | None, now: bytes | None) -> bool:
    """True if this process's own recorded writes lead from `before` to `now`."""
    start, goal = digest(before), digest(now)
    with _lock:
        steps = {k: set(v) for k, v in _transitions.get(_key(path), {}).items()}
    seen, frontier = {start}, [start]
    while frontier:
        current = frontier.pop()
        if current == goal:
            return True
        for nxt in steps.get(current, ()):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return False
