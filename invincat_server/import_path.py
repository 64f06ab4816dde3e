"""Keep the working directory off the import path of Invincat's own processes.

Python puts the current directory on `sys.path` in several ways: `python -m`/`-c` add it
first, and an empty or relative `PYTHONPATH` entry (`PYTHONPATH=:/opt/lib`, the classic
result of `export PYTHONPATH=$PYTHONPATH:/opt/lib`) is made absolute against the
directory the process started in. Invincat starts in the user's project, so any of these
would let a file of the project named like a module we import (`pydantic.py`,
`aiosqlite.py`) run as our code (docs/security.md, "Repository content never runs as
Invincat's code"). Standard library only: the command line imports this on every start.
"""

from __future__ import annotations

import os
import sys


def drop_directory(directory: str) -> None:
    """Remove from `sys.path` the empty and relative entries (they resolve against the
    working directory, whatever it is now or becomes) and every entry that is `directory`
    itself. Our own package keeps working: its modules are found through its `__path__`,
    never through `sys.path`, even when it is installed from a checkout at `directory`."""
    target = _real(directory)
    sys.path[:] = [
        entry
        for entry in sys.path
        if not isinstance(entry, str)  # not ours to judge (Python itself only adds str)
        or (os.path.isabs(entry) and (target is None or _real(entry) != target))
    ]


def drop_working_directory() -> None:
    """`drop_directory` for the current working directory (only the relative entries when
    it no longer exists)."""
    try:
        here = os.getcwd()
    except OSError:
        here = "/nonexistent/"  # matches no entry: only the relative ones go
    drop_directory(here)


def relative_entries(search_path: str | None) -> list[str]:
    """The empty and relative entries of a PYTHONPATH value (an empty value is no entry
    at all, as Python reads it). Python makes them absolute against the directory it
    starts in, and imports through them during its own start-up (`site`, `.pth` files,
    `sitecustomize`, standard modules not loaded yet) before any code of ours can drop
    them: only the user can."""
    if not search_path:
        return []
    return [entry for entry in search_path.split(os.pathsep) if not os.path.isabs(entry)]


def _real(path: str) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):  # ValueError: a NUL byte
        return None
