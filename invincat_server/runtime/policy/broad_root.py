"""A one-time warning when the project root is the user's home directory or `/`.

With no project marker (.git, pyproject.toml, …) above the working directory the root
falls back to the directory itself (`config.find_project_root`), and started from `~` that
puts dotfiles, keys and every other project inside the workspace. Invincat still works
there (its own files are protected), but the user should know, once per root: the roots
already warned about are remembered in `$INVINCAT_HOME/warned_roots.json`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from invincat_server.runtime import private_files
from invincat_server.runtime.policy import file_lock

WARNED_FILE = "warned_roots.json"


def _broad_kind(root: Path, user_home: Path) -> str | None:
    real = os.path.realpath(root)
    if real == os.path.realpath(os.sep):
        return "the whole file system (/)"
    if real == os.path.realpath(user_home):
        return f"your home directory ({real})"
    return None


def broad_root_warning(
    root: Path, invincat_home: Path, user_home: Path | None = None
) -> str | None:
    """The warning to show for `root`, or None (not broad, or already shown once).

    Records the root as warned, so the caller must show the message it gets.
    """
    user_home = user_home if user_home is not None else Path(os.path.expanduser("~"))
    kind = _broad_kind(root, user_home)
    if kind is None:
        return None
    path = invincat_home / WARNED_FILE
    key = os.path.realpath(root)
    try:
        with file_lock.exclusive(path):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                roots = list(data["roots"]) if isinstance(data, dict) else []
            except (OSError, ValueError, KeyError, TypeError):
                roots = []  # missing or damaged: warning again is the safe side
            if key in roots:
                return None
            roots.append(key)
            text = json.dumps({"version": 1, "roots": roots}, indent=2)
            private_files.atomic_write(path, text.encode(), root=path.parent, durable=False)
    except OSError:
        pass  # cannot remember it: still warn now
    return (
        f"Warning: the project root is {kind}. No project marker (.git, pyproject.toml, "
        "package.json, Cargo.toml, go.mod) was found above the working directory, so the "
        "agent's file and search tools reach every file under it (dotfiles, keys, other "
        "projects). Invincat's own files stay protected. Open or create a project folder "
        "instead (e.g. `git init` one). Shown once for this folder."
    )
