"""Who proposed a memory entry, from which branch: recorded on every new entry and on
every batch a person or their session makes (issue 25), so a team sees who wrote what.

The author is git's `user.name` / `user.email` as the project sees them (`git config`,
its local, global and system files), else the OS user (name only). The branch is the one
`HEAD` names (none when detached or outside git), read from the file as git does, so a
batch costs no process for it; the identity costs one `git config` per MemoryService.

Attribution is self-asserted (anyone can set `user.name`): it is shown, filtered on
(`memory log --author`), never used to grant anything. Every value goes through the
same checks as any stored text: a size bound, printable characters only (no NUL, no
terminal escapes), and nothing that redaction would mask; a value that fails is left out,
and the rest is kept.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from invincat_server.runtime.memory.schema import (
    MAX_AUTHOR_EMAIL,
    MAX_AUTHOR_NAME,
    MAX_BRANCH,
    plain_label,
)

GIT_TIMEOUT = 15.0
"""Seconds `git config` may take on a loaded machine before the OS user is used instead."""
_HEAD_BYTES = 4096


@dataclass(frozen=True)
class Attribution:
    name: str | None = None
    email: str | None = None
    branch: str | None = None

    def author(self) -> dict[str, Any] | None:
        """`{"name", "email"}` as stored (`email` may be null), None without a name."""
        if self.name is None:
            return None
        return {"name": self.name, "email": self.email}


def clean(value: object, limit: int) -> str | None:
    """`value` stripped when it may be stored as attribution, else None."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    if not plain_label(value, limit):
        return None
    from invincat_server.runtime.memory.redaction import redact, residual_secrets

    if redact(value).changed or residual_secrets(value):
        return None  # never store what looks like a secret, even in a name
    return value


def git_identity(project_root: Path) -> tuple[str | None, str | None]:
    """(user.name, user.email) as git resolves them for the project; Nones when unset or
    git is missing, slow or refuses (e.g. a repository owned by someone else)."""
    from invincat_server.runtime.git_command import git_output

    # Exit 1 with nothing printed when neither is set: the same Nones as a failure.
    out = git_output(
        project_root,
        ["config", "-z", "--get-regexp", r"^user\.(name|email)$"],
        timeout=GIT_TIMEOUT,
    )
    if out is None:
        return None, None
    found: dict[str, str] = {}
    for item in out.split(b"\0"):
        key, _, value = item.partition(b"\n")
        with contextlib.suppress(UnicodeDecodeError):
            found[key.decode("ascii")] = value.decode("utf-8")  # the last one wins, as in git
    return (
        clean(found.get("user.name"), MAX_AUTHOR_NAME),
        clean(found.get("user.email"), MAX_AUTHOR_EMAIL),
    )


def os_user() -> str | None:
    import getpass

    try:
        return clean(getpass.getuser(), MAX_AUTHOR_NAME)
    except Exception:  # getpass raises OSError, KeyError or ImportError, by platform
        return None


def _git_dir(start: Path) -> Path | None:
    """The git directory of the repository `start` is in (a worktree's `.git` file
    names it), or None."""
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = dot_git.read_bytes()[:_HEAD_BYTES].decode("utf-8")
                if text.startswith("gitdir:"):
                    target = Path(text[len("gitdir:") :].strip())
                    return target if target.is_absolute() else folder / target
            return None
    return None


def current_branch(project_root: Path) -> str | None:
    """The branch `HEAD` names (`ref: refs/heads/<branch>`); None when detached."""
    git_dir = _git_dir(Path(project_root))
    if git_dir is None:
        return None
    try:
        with open(git_dir / "HEAD", "rb") as fh:
            head = fh.read(_HEAD_BYTES).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    prefix = "ref: refs/heads/"
    return clean(head[len(prefix) :], MAX_BRANCH) if head.startswith(prefix) else None


class Attributor:
    """The attribution of one project's batches: the identity looked up once, the branch
    at every batch (a session outlives a `git switch`)."""

    def __init__(self, project_root: Path) -> None:
        self.project_root = Path(project_root)
        self._identity: tuple[str | None, str | None] | None = None

    def current(self, *, with_branch: bool = True) -> Attribution:
        if self._identity is None:
            name, email = git_identity(self.project_root)
            if name is None:
                name, email = os_user(), None
            self._identity = (name, email)
        name, email = self._identity
        branch = current_branch(self.project_root) if with_branch else None
        return Attribution(name, email, branch)


def author_text(author: object) -> str | None:
    """`Name <email>` (or `Name`) of a stored author, None when there is none."""
    if not isinstance(author, dict) or not isinstance(author.get("name"), str):
        return None
    email = author.get("email")
    return f"{author['name']} <{email}>" if isinstance(email, str) and email else author["name"]


def record_matches(record: dict[str, Any], needle: str) -> bool:
    """`memory log --author NEEDLE`: the batch was made by a matching author, or changed
    an entry a matching author proposed (so the `external` batch that brought a
    teammate's entries in shows under their name). Case-insensitive substring of
    `Name <email>`, like `git log --author`."""
    wanted = needle.casefold()

    def matches(author: object) -> bool:
        text = author_text(author)
        return text is not None and wanted in text.casefold()

    if matches(record.get("author")):
        return True
    for side in ("before", "after"):
        for entry in (record.get(side) or {}).values():
            source = entry.get("source") if isinstance(entry, dict) else None
            if isinstance(source, dict) and matches(source.get("author")):
                return True
    return False
