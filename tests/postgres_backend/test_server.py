"""The PostgreSQL fixture gives each test its own empty database on a real server."""

from __future__ import annotations

import pytest

psycopg = pytest.importorskip("psycopg")


def test_each_test_gets_a_fresh_database(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE probe (n integer)")
        conn.execute("INSERT INTO probe VALUES (1)")
        row = conn.execute("SELECT count(*) FROM probe").fetchone()
    assert row == (1,)


def test_the_server_asks_for_a_password(pg_url: str) -> None:
    without = pg_url.replace(pg_url.split("//", 1)[1].split("@", 1)[0] + "@", "")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(without, connect_timeout=30).close()
