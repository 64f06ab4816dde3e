"""A cross-process exclusive lock for the small JSON files under `$INVINCAT_HOME`.

`approvals.json` and `trusted_projects.json` are read-modified-written by every Invincat
process of the user (several editor windows, the CLI); without a lock two processes adding
a rule at once each write their own copy and one rule is lost. The memory store lock
(`memory/store.py`) uses the same primitive: `flock` on a side file, released by the
kernel if the process dies. Hand-written on the standard library's `fcntl` rather than
a new dependency: it is these few lines.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from invincat_server.runtime import private_files


class FileLockTimeout(OSError):
    """Another process held the lock too long; the message names the lock file."""


def acquire(lock: Path, *, timeout: float, root: Path | None = None) -> int:
    """Open `lock` (created 0600, no link followed below `root`: private_files.py) and
    take an exclusive `flock` on it; return the fd.

    The caller closes the fd to release the lock. Raises FileLockTimeout after `timeout`
    seconds, or OSError when the lock file cannot be opened (the fd is then not leaked).
    """
    fd = private_files.open_file(lock, os.O_RDWR | os.O_CREAT, root=root)
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                raise FileLockTimeout(
                    f"Another process has held {lock} for over {timeout:g}s; retry, or "
                    "stop the stuck invincat process."
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.01)


@contextlib.contextmanager
def exclusive(target: Path, *, timeout: float = 30.0) -> Iterator[None]:
    """Hold an exclusive lock on `<target>.lock` (created 0600 next to `target`)."""
    lock = target.with_name(target.name + ".lock")
    fd = acquire(lock, timeout=timeout, root=lock.parent)  # the home itself may be a link
    try:
        yield
    finally:
        os.close(fd)
