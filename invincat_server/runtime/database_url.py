"""The PostgreSQL backend's one setting: which database, and how to name it safely.

`database_url` (`INVINCAT_DATABASE_URL`, or `database_url` in `$INVINCAT_HOME/config.toml`)
chooses PostgreSQL for threads, checkpoints and governed memory; unset, the embedded
SQLite file and JSON stores are used. The URL is a libpq connection URI. Its password is
a secret: it is accepted from the environment only (a config file is readable by tools
and gets shared), and everything that shows the URL — logs, errors, status output —
shows `redacted(url)`, never the URL itself. libpq's own sources of a password
(`PGPASSWORD`, `~/.pgpass`, a service file) work as usual.
"""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit, urlunsplit

SCHEMES = ("postgresql", "postgres")


class DatabaseUrlError(ValueError):
    """The URL cannot be used; the message says why, without the password."""


def _split(url: str) -> SplitResult:
    if "\x00" in url:
        raise DatabaseUrlError("database_url contains a NUL byte.")
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  # raises on a port that is not a number
    except ValueError as exc:
        raise DatabaseUrlError(f"database_url is not a URL: {exc}.") from None
    if parts.scheme not in SCHEMES:
        raise DatabaseUrlError(
            f"database_url must start with postgresql:// (got {parts.scheme or 'no'} scheme)."
        )
    return parts


def has_password(url: str) -> bool:
    return _split(url).password is not None


def check(url: str, *, from_file: bool) -> str:
    """The URL, stripped, or DatabaseUrlError. A password is refused in a config file."""
    parts = _split(url)
    if from_file and parts.password is not None:
        raise DatabaseUrlError(
            "database_url in config.toml must not contain a password: set INVINCAT_DATABASE_URL "
            "in the environment instead, or use PGPASSWORD or ~/.pgpass."
        )
    return urlunsplit(parts)


def redacted(url: str) -> str:
    """The URL with its password (and any query, which may carry one) replaced by `***`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<database url>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    user = parts.username
    if user is not None:
        auth = f"{user}:***@" if parts.password is not None else f"{user}@"
    else:
        auth = ":***@" if parts.password is not None else ""
    query = "***" if parts.query else ""
    return urlunsplit((parts.scheme, auth + host, parts.path, query, ""))
