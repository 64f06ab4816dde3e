"""The one place that chooses where memory lives: the JSON store files (the embedded
default), or PostgreSQL when `database_url` is set (pg_writer.py).

Both give a `MemoryService` whose governance is the same code; only the write seam
differs. The database's namespaces and who may write come from `[memory]` in
`$INVINCAT_HOME/config.toml` (never from the project's own `.invincat/config.toml`: a
cloned repository must not choose which team's memory it reads and writes):

```toml
[memory]
repository = "acme/widgets"   # project namespace; else origin's URL, else the path
user = "alice"                # user namespace; else git's user.email, else the OS login
writers = ["Alice Example", "bob@example.com"]   # who may write project memory
```

`INVINCAT_MEMORY_REPOSITORY` overrides `repository` (one shell, one project).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.memory.errors import MemoryConfigError
from invincat_server.runtime.memory.repository import (
    RepositoryNameError,
    check_name,
    project_namespace,
    user_namespace,
)

if TYPE_CHECKING:
    from invincat_server.runtime.memory.models import Scope
    from invincat_server.runtime.memory.service import MemoryService

REPOSITORY_ENV = "INVINCAT_MEMORY_REPOSITORY"
MAX_WRITERS = 1000


@dataclass(frozen=True)
class DatabaseOptions:
    """`[memory]` settings of the PostgreSQL backend."""

    repository: str | None = None
    user: str | None = None
    writers: frozenset[str] | None = None
    """Case-folded names and emails allowed to write project memory; None: anyone whose
    database role may."""


def load_options(home: Path, env: Mapping[str, str] | None = None) -> DatabaseOptions:
    env = os.environ if env is None else env
    path = home / "config.toml"
    try:
        with path.open("rb") as fh:
            section: Any = tomllib.load(fh).get("memory", {})
    except FileNotFoundError:
        section = {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise MemoryConfigError(f"Cannot read {path}: {exc}. Fix or remove the file.") from exc
    if not isinstance(section, dict):
        raise MemoryConfigError(f"{path}: [memory] must be a table.")
    try:
        repository = env.get(REPOSITORY_ENV) or section.get("repository")
        repository = None if repository is None else check_name(repository, "repository")
        user = section.get("user")
        user = None if user is None else check_name(user, "[memory] user")
        writers = _writers(section.get("writers"))
    except RepositoryNameError as exc:
        raise MemoryConfigError(f"{path}: {exc}") from None
    return DatabaseOptions(repository, user, writers)


def _writers(raw: object) -> frozenset[str] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) > MAX_WRITERS:
        raise RepositoryNameError(
            f"[memory] writers must be a list of at most {MAX_WRITERS} names."
        )
    return frozenset(check_name(item, "each of [memory] writers").casefold() for item in raw)


def namespaces(project_root: Path, options: DatabaseOptions) -> dict[Scope, str]:
    email = None
    if options.user is None:
        from invincat_server.runtime.memory.attribution import Attributor

        email = Attributor(project_root).current(with_branch=False).email
    return {
        "user": user_namespace(options.user, email),
        "project": project_namespace(project_root, options.repository),
    }


def writer_factory(
    home: Path, project_root: Path, database_url: str | None
) -> Callable[..., Any] | None:
    """What `MemoryService(writer=...)` takes: None for the JSON files, else a factory of
    the PostgreSQL seam for this project's and user's namespaces."""
    if database_url is None:
        return None
    from invincat_server.runtime.memory.pg_writer import PgStoreWriter

    options = load_options(home)
    names = namespaces(project_root, options)

    def make(files: Any, *, lock_timeout: float) -> PgStoreWriter:
        return PgStoreWriter(
            files,
            lock_timeout=lock_timeout,
            url=database_url,
            namespaces=names,
            writers=options.writers,
        )

    return make


def open_service(
    home: Path, project_root: Path, database_url: str | None, **kwargs: Any
) -> MemoryService:
    """The project's MemoryService on the backend `database_url` chooses."""
    from invincat_server.runtime.memory.service import MemoryService

    factory = writer_factory(home, project_root, database_url)
    return MemoryService(home, project_root, writer=factory, **kwargs)
