"""The `.invincat/` data directories, created with a `.gitignore` that keeps them private.

`<project>/.invincat/` lives inside the user's repository, and `$INVINCAT_HOME` may live
inside a dotfiles repository. Offload transcripts (whole conversations), locks, backups and
temp files must not end up in a commit by a plain `git add .`, so whoever creates or writes
into such a directory calls `ensure_data_dir` first.

The `.gitignore` is an allow-list: everything is ignored except the files meant to be
shared with a team. A file added by a later version of Invincat is therefore private until
someone decides otherwise. It is created only when absent (`O_EXCL`, no link followed on
the way: runtime/private_files.py) and never rewritten: a user's edits, or a deliberately
empty file, win.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from invincat_server.runtime import private_files

GITIGNORE_NAME = ".gitignore"

GITIGNORE_TEXT = """\
# Created by Invincat because this directory had no .gitignore. Invincat never rewrites
# this file: edit it freely (an empty file turns it off). See docs/security.md.
#
# Ignored (private or machine-local): offload/ transcripts (whole conversations), the
# memory journal, locks, corrupt/tampered backups, temp files, logs, threads, approvals,
# and anything else not listed below.
*
!.gitignore
# Shareable with a team (commit them if you want to):
!memory_project.json
!config.toml
!mcp.json
!subagents.json
!skills/
!skills/**
"""


def ensure_data_dir(directory: Path, *, root: Path | None = None) -> None:
    """Create `directory` (0700) if needed and give it the default `.gitignore` if it has
    none. `root` is where the no-follow walk starts (private_files.py): the project root,
    or `$INVINCAT_HOME` itself when `directory` is the home.

    Raises OSError only when the directory itself cannot be created (UnsafePathError when
    a link or a file is in the way); failing to write the `.gitignore` (a read-only
    directory, a full disk) must not block the write the caller is about to make, and
    the next call tries again.
    """
    private_files.ensure_dir(directory, root=root)
    with contextlib.suppress(OSError):  # it exists (the user's or ours; a link counts)
        private_files.create_new(directory / GITIGNORE_NAME, GITIGNORE_TEXT.encode(), root=root)
