"""Connections to the PostgreSQL backend (`database_url`), with errors safe to show.

psycopg's connection errors can quote the connection string, so every failure to connect is
re-raised as `DatabaseUnavailableError` whose message names the database by
`database_url.redacted()` only. psycopg is imported lazily: the embedded default never
loads it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.database_url import redacted

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_SECONDS = 30
_PASSWORD_IN_TEXT = re.compile(r"(password\s*=\s*)\S+|(://[^:/@\s]*:)[^@\s]*@", re.IGNORECASE)


class DatabaseUnavailableError(Exception):
    """The database could not be reached or refused us; the message has no password."""


def scrub(text: str, url: str) -> str:
    """`text` (a driver's error) with the URL, its password and any password=… removed."""
    parts = [url]
    from urllib.parse import unquote, urlsplit

    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    if password:
        parts += [password, unquote(password)]
    for secret in parts:
        if secret:
            text = text.replace(secret, "***" if secret != url else redacted(url))
    return _PASSWORD_IN_TEXT.sub(
        lambda m: (m.group(1) or m.group(2)) + "***" + ("@" if m.group(2) else ""), text
    )


def _unavailable(url: str, exc: Exception) -> DatabaseUnavailableError:
    reason = scrub(
        str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, url
    )
    return DatabaseUnavailableError(f"Cannot use the database {redacted(url)}: {reason}")


def connect(url: str, **kwargs: Any) -> psycopg.Connection[Any]:
    """A synchronous connection (autocommit unless told otherwise)."""
    import psycopg

    kwargs.setdefault("autocommit", True)
    kwargs.setdefault("connect_timeout", CONNECT_TIMEOUT_SECONDS)
    try:
        return psycopg.connect(url, **kwargs)
    except psycopg.Error as exc:
        raise _unavailable(url, exc) from None


async def connect_async(url: str, **kwargs: Any) -> psycopg.AsyncConnection[Any]:
    """An asyncio connection (autocommit unless told otherwise)."""
    import psycopg

    kwargs.setdefault("autocommit", True)
    kwargs.setdefault("connect_timeout", CONNECT_TIMEOUT_SECONDS)
    try:
        return await psycopg.AsyncConnection.connect(url, **kwargs)
    except psycopg.Error as exc:
        raise _unavailable(url, exc) from None
