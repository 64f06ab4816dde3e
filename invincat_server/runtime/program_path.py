"""Finding the programs Invincat starts itself (ripgrep, MCP servers) on PATH without
looking in the project.

An empty or relative PATH entry (`PATH=.:$PATH`, `PATH=bin:...`, a trailing `:`) means a
directory relative to the working directory, which is the user's project; a lookup
through it would run a program a cloned repository planted (`./rg`, `./npx`) as if it
were the installed one (docs/security.md, "Repository content never runs as Invincat's
code"). Such entries are skipped; what remains is where the user installed programs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping


def absolute_entries(search_path: str | None) -> str:
    """`search_path` (a PATH value) with only its absolute directories."""
    parts = (search_path or "").split(os.pathsep)
    return os.pathsep.join(part for part in parts if os.path.isabs(part))


def find_program(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The absolute path of program `name` from the absolute entries of PATH (`environ`'s,
    else ours), or None. A name with a directory part is not looked up: the caller decided
    where it lives."""
    env = os.environ if environ is None else environ
    return shutil.which(name, path=absolute_entries(env.get("PATH", os.defpath)))
