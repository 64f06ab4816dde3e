"""Connecting to the database backend: a refusal is a clear error without the password."""

from __future__ import annotations

import pytest

from invincat_server.runtime import database

pytest.importorskip("psycopg")


def test_a_wrong_password_is_a_clear_error_that_hides_it(pg_url: str) -> None:
    user_and_secret = pg_url.split("//", 1)[1].split("@", 1)[0]
    user = user_and_secret.split(":", 1)[0]
    wrong = pg_url.replace(user_and_secret, f"{user}:Wr0ngSecretValue")
    with pytest.raises(database.DatabaseUnavailableError) as err:
        database.connect(wrong)
    text = str(err.value)
    assert "Wr0ngSecretValue" not in text
    assert "Cannot use the database postgresql://" in text


async def test_an_async_connection_works(pg_url: str) -> None:
    conn = await database.connect_async(pg_url)
    async with conn:
        cur = await conn.execute("SELECT 1")
        assert await cur.fetchone() == (1,)


def test_scrub_removes_passwords_from_driver_text() -> None:
    url = "postgresql://ann:p%40ss@db/inv"
    text = "failed for postgresql://ann:p%40ss@db/inv password=p@ss and p%40ss"
    out = database.scrub(text, url)
    assert "p@ss" not in out and "p%40ss" not in out
