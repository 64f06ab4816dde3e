"""The project's files, named in the main agent's system prompt.

Small models do not look before they act: Qwen2.5-Coder-1.5B, asked to fix the test in
test_calc.py, wrote `src/main.py` and `test_add.py` without ever listing the project
(bench/README.md). A short list of the project's files grounds them, as Claude Code's
start-of-session snapshot and Aider's repository map do for larger ones.

It is taken once, when the session opens, so the system prompt stays the same from one
model call to the next (a local server then reuses its cached prompt instead of reading
it again, minutes on 2 cores); the section says it is a snapshot. Which files: those
`git ls-files -co --exclude-standard` lists, else a bounded walk skipping the folders the
search tools skip; never what the workspace's deny hook protects (memory stores,
Invincat's home), and never a name with control characters (it could break the prompt's
lines).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from invincat_server.runtime.checkpoints.tree import SKIP_DIRS, git_files

MAX_FILES = 40
"""How many files are named; a larger project gets "… and N more" and the tools."""
WALK_LIMIT = 2000
"""Outside git, the walk stops after this many files (a home folder opened as a project)."""


def _walked(root: Path) -> list[str]:
    found: list[str] = []
    for top, dirs, files in os.walk(root):  # topdown, follows no link to a folder
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        base = os.path.relpath(top, root)
        for name in sorted(files):
            found.append(name if base == "." else f"{base}/{name}".replace(os.sep, "/"))
            if len(found) >= WALK_LIMIT:
                return found
    return found


def _printable(name: str) -> bool:
    return name.isprintable()


def project_overview(root: Path, denied: Callable[[Path], bool]) -> str:
    """The prompt section naming the project's files ("" for an empty project)."""
    listed = git_files(root)
    names = listed if listed is not None else _walked(root)
    shown = [n for n in names if _printable(n) and not denied(root / n)]
    if not shown:
        return ""
    # The top folder's files first: what a user names in a request is most often there.
    shown.sort(key=lambda n: (n.count("/"), n))
    lines = [f"- {name}" for name in shown[:MAX_FILES]]
    if len(shown) > MAX_FILES:
        lines.append(f"- … and {len(shown) - MAX_FILES} more (use ls, glob or grep)")
    return (
        "## Project files\n"
        "The project's files when this session started (read a file before relying on it):\n"
        + "\n".join(lines)
    )
