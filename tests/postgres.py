"""A real PostgreSQL server for the tests that need one.

`pg_admin_url` (session): a server the tests may create databases on. From
`INVINCAT_TEST_DATABASE_URL` when set (a superuser's URL, or a role with CREATEDB);
otherwise a private cluster started here with Debian's `initdb`/`pg_ctl` in a temp
directory, on loopback, password-protected (scram), stopped at the end of the session.
As root the cluster runs as the `postgres` user, because PostgreSQL refuses to run as root.

`pg_url` (function): a fresh, empty database on that server, dropped afterwards, so tests
never see each other's rows.

Where no server can be had the tests are skipped with a message saying why; under CI
(`CI` set) they fail instead, so a missing server never passes silently.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit, urlunsplit

import pytest

_START_SECONDS = 180.0


def _unavailable(why: str) -> NoReturn:
    message = f"PostgreSQL is not available: {why} (Debian: apt-get install postgresql)"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _bindir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
    if found:
        return found[0].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


def _run(argv: list[str], timeout: float) -> None:
    subprocess.run(
        _as_server_user(argv),
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=timeout,
    )


@contextlib.contextmanager
def _private_cluster() -> Iterator[str]:
    bindir = _bindir()
    if bindir is None:
        _unavailable("no initdb found")
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            _unavailable("running as root and there is no postgres user to run the server as")
    top = Path(tempfile.mkdtemp(prefix="invincat-pg-"))
    os.chmod(top, 0o755)
    data, sock_dir = top / "data", top / "sock"
    sock_dir.mkdir()
    password = secrets.token_hex(16)
    pwfile = top / "pw"
    # The cluster's superuser password: 0600 from the start, never readable by others.
    fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(password + "\n")
    if os.geteuid() == 0:
        shutil.chown(top, "postgres")
        shutil.chown(sock_dir, "postgres")
        shutil.chown(pwfile, "postgres")
    port = _free_port()
    try:
        _run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=scram-sha-256",
                f"--pwfile={pwfile}",
                "--no-sync",
                "-E",
                "UTF8",
            ],
            timeout=_START_SECONDS,
        )
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={sock_dir} "
            "-c fsync=off -c max_connections=200"
        )
        _run(
            [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-t", "120", "start"],
            timeout=_START_SECONDS,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        shutil.rmtree(top, ignore_errors=True)
        _unavailable(f"could not start a private cluster: {exc} {detail.decode(errors='replace')}")
    try:
        yield f"postgresql://postgres:{password}@127.0.0.1:{port}/postgres"
    finally:
        with contextlib.suppress(Exception):
            _run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], timeout=60)
        shutil.rmtree(top, ignore_errors=True)


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    given = os.environ.get("INVINCAT_TEST_DATABASE_URL")
    if given:
        yield given
        return
    with _private_cluster() as url:
        yield url


@pytest.fixture
def pg_url(pg_admin_url: str) -> Iterator[str]:
    psycopg = pytest.importorskip("psycopg")
    name = f"invincat_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(pg_admin_url, name)
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
