"""Connections to the PostgreSQL backend (`database_url`), with errors safe to show.

psycopg's connection errors can quote the connection string, so every failure to connect is
re-raised as `DatabaseUnavailableError` whose message names the database by
`database_url.redacted()` only. psycopg is imported lazily: the embedded default never
loads it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from invincat_server.runtime.database_url import redacted

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_SECONDS = 30
# What a driver's text may still hold after the URL itself is replaced: `password=...` of a
# key/value connection string, and the `:secret@` of another URI.
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)\S+", re.IGNORECASE)
_URI_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s]*@")


class DatabaseUnavailableError(Exception):
    """The database could not be reached or refused us; the message has no password."""


def scrub(text: str, url: str) -> str:
    """`text` (a driver's error) with the URL redacted and its password, raw or URL-decoded,
    and any other `password=…` or URI password replaced by `***`."""
    text = text.replace(url, redacted(url))
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    for secret in {password, unquote(password)} if password else ():
        text = text.replace(secret, "***")
    text = _KEYWORD_PASSWORD.sub(r"\1***", text)
    return _URI_PASSWORD.sub(r"\1***@", text)


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
