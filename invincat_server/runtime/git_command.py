"""Reading from git, one way for every caller (checkpoints, memory attribution, memory's
repository name).

Only read-only git commands come here. Each one runs with `core.fsmonitor` switched off,
so the repository's config cannot make git start a program. `GIT_OPTIONAL_LOCKS=0` keeps
git from taking the index lock a concurrent `git` of the user's would trip over. stdin is
never the server's: a stdio server's stdin is its protocol stream.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path


def git_output(root: Path, args: Sequence[str], *, timeout: float) -> bytes | None:
    """stdout of `git ARGS` run in `root`, or None when git is missing, runs past
    `timeout` or exits non-zero."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "-c", "core.fsmonitor=false", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
