"""Which namespace of the memory database a project and a user write to.

Two checkouts of one repository (other folders, other machines) must share project memory,
so a project is named by its repository, not its path: `[memory] repository` when the
user's config sets it, else the normalised URL of the `origin` remote, else (no git, no
remote) the resolved project path, which only that checkout has. The user's memory is
named by `[memory] user` when set, else git's `user.email` (one person's machines share
it; two people who both log in as `ubuntu` do not), else the OS login name.

The URL is normalised so that the spellings git accepts for one repository are one name:
`git@github.com:a/b.git`, `ssh://git@github.com:22/a/b`, `https://tok@github.com/a/b/`
all become `github.com/a/b` (no scheme, credentials, port, `.git` or trailing slash; the
host lowercased). Credentials never reach the database or a notification.
"""

from __future__ import annotations

import getpass
import re
from pathlib import Path
from urllib.parse import urlsplit

from invincat_server.runtime.git_command import git_output

GIT_TIMEOUT = 15.0
MAX_NAME = 400
"""Characters of a namespace name (a notification's payload is bounded at 8,000 bytes)."""

_SCP_LIKE = re.compile(r"^(?:[^@/:\s]+@)?(?P<host>[^/:\s]+):(?P<path>(?!/).+)$")
"""git's scp-like syntax `user@host:path` (a path not starting with `/`)."""


class RepositoryNameError(ValueError):
    """A configured name that cannot be a namespace (empty, too long, control characters)."""


def check_name(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise RepositoryNameError(f"{what} must be a string, got {type(value).__name__}.")
    value = value.strip()
    if not value or len(value) > MAX_NAME or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise RepositoryNameError(
            f"{what} must be 1 to {MAX_NAME} printable characters, got {len(value)} characters."
        )
    return value


def normalise_remote(url: str) -> str | None:
    """The repository's name for a remote URL (None: nothing usable in it)."""
    url = url.strip()
    if not url or "\x00" in url:
        return None
    scp = _SCP_LIKE.match(url) if "://" not in url else None
    if scp is not None:
        host, path = scp.group("host"), scp.group("path")
    elif "://" in url:
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
        except ValueError:
            return None
        path = parts.path
        if parts.scheme == "file" or not host:
            host, path = "file", parts.path
    else:
        host, path = "file", url  # a local path remote
    path = path.strip("/")
    path = path.removesuffix(".git").rstrip("/")
    if not path:
        return None
    name = f"{host.lower()}/{path}"
    return name if len(name) <= MAX_NAME else None


def origin_url(project_root: Path) -> str | None:
    """`git remote get-url origin` of the project, None without git, a repo or origin."""
    out = git_output(project_root, ["remote", "get-url", "origin"], timeout=GIT_TIMEOUT)
    if out is None:
        return None
    return out.decode("utf-8", errors="replace").strip() or None


def project_namespace(project_root: Path, configured: str | None = None) -> str:
    """`project:<name>` for the project's memory rows."""
    if configured is not None:
        return f"project:{configured}"
    remote = origin_url(project_root)
    name = normalise_remote(remote) if remote else None
    if name is not None:
        return f"project:{name}"
    return f"project:path:{project_root.resolve()}"[: MAX_NAME + 8]


def user_namespace(configured: str | None = None, email: str | None = None) -> str:
    """`user:<name>` for the user's memory rows."""
    if configured is not None:
        return f"user:{configured}"
    if email:
        return f"user:{email}"[: MAX_NAME + 5]
    try:
        name = getpass.getuser()
    except (OSError, KeyError):
        name = "unknown"
    return f"user:{name}"
