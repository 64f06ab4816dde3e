"""Governed memory on PostgreSQL vs the JSON store files (issue 26).

Run: .venv/bin/python bench/bench_pg_memory.py [--database-url URL] [--rounds N]

Without `--database-url` it starts a private cluster (Debian's initdb/pg_ctl, loopback,
fsync on, as a real server would run), like tests/postgres.py, and removes it afterwards.
Figures, each next to the JSON store measured in the same run on the same data:
- governed write: one single-create batch through MemoryService.apply (lock, re-read,
  govern, write, journal, commit), p50/p95 over N rounds on a store of 100 entries;
- list: MemoryService.list("project") on a store of 500 entries (moved into the database
  by `memory import`, the real path), p50/p95.
Goals: write p95 <= 3x the JSON store's; list <= 50 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_memory import BIG, seed_store

from invincat_server.runtime.memory import MemoryService
from invincat_server.runtime.memory.backend import open_service
from invincat_server.runtime.memory.transfer import transfer


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timings(fn: Callable[[int], object], rounds: int) -> list[float]:
    found = []
    for n in range(rounds):
        start = time.perf_counter()
        fn(n)
        found.append((time.perf_counter() - start) * 1000)
    return found


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextlib.contextmanager
def private_cluster() -> Iterator[str]:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
    if not found:
        sys.exit("no initdb found: pass --database-url, or apt-get install postgresql")
    bindir = found[0].parent
    top = Path(tempfile.mkdtemp(prefix="invincat-pgbench-"))
    os.chmod(top, 0o755)
    password = secrets.token_hex(16)
    (top / "pw").write_text(password + "\n")
    (top / "sock").mkdir()
    if os.geteuid() == 0:
        for path in (top, top / "pw", top / "sock"):
            shutil.chown(path, "postgres")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = top / "data"
    run = {"check": True, "stdout": subprocess.DEVNULL, "timeout": 300}
    subprocess.run(
        _as_server_user(
            [
                *(str(bindir / "initdb"), "-D", str(data), "-U", "postgres"),
                *("--auth=scram-sha-256", f"--pwfile={top / 'pw'}", "-E", "UTF8"),
            ]
        ),
        **run,  # type: ignore[call-overload]
    )
    options = f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={top}/sock"
    ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-t", "120"]
    subprocess.run(_as_server_user([*ctl, "start"]), **run)  # type: ignore[call-overload]
    try:
        yield f"postgresql://postgres:{password}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_server_user([*ctl, "-m", "fast", "stop"]), **run)  # type: ignore[call-overload]
        shutil.rmtree(top, ignore_errors=True)


def create(n: int, tag: str) -> dict[str, object]:
    return {
        "op": "create",
        "scope": "project",
        "section": "Bench",
        "content": f"bench {tag} write {n} says module m{tag}{n} keeps rule q{n}z",
    }


def services(url: str, top: Path, name: str, size: int) -> tuple[MemoryService, MemoryService]:
    """(JSON, database) services over the same `size` seeded entries."""
    home, root = top / f"{name}-home", top / f"{name}-proj"
    home.mkdir()
    seed_store(root, size)
    files = MemoryService(home, root, limits=BIG)
    files.list("project")
    database = open_service(home, root, url, limits=BIG)
    transfer(database, "import", "project")
    # The JSON side goes on in a copy of the seeded store of its own.
    json_root = top / f"{name}-json"
    shutil.copytree(root, json_root)
    return MemoryService(home, json_root, limits=BIG), database


def line(label: str, db: list[float], files: list[float]) -> None:
    p50, p95 = percentile(db, 0.5), percentile(db, 0.95)
    f50, f95 = percentile(files, 0.5), percentile(files, 0.95)
    print(
        f"{label:<34} postgres p50 {p50:7.2f} ms  p95 {p95:7.2f} ms   "
        f"json p50 {f50:7.2f} ms  p95 {f95:7.2f} ms   p95 ratio {p95 / f95:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", help="an existing server (default: a private one)")
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    cluster = contextlib.nullcontext(args.database_url) if args.database_url else private_cluster()
    with cluster as url, tempfile.TemporaryDirectory(prefix="invincat-pgbench-") as tmp:
        top = Path(tmp)
        files, database = services(url, top, "write", 100)
        for warm in (files, database):
            warm.apply("project", [create(-1, "warm")])
        write_db = timings(lambda n: database.apply("project", [create(n, "d")]), args.rounds)
        write_files = timings(lambda n: files.apply("project", [create(n, "f")]), args.rounds)
        line("governed write (1 create) @ 100", write_db, write_files)
        files, database = services(url, top, "list", 500)
        assert len(database.list("project")) == len(files.list("project")) == 500
        list_db = timings(lambda _: database.list("project"), args.rounds)
        list_files = timings(lambda _: files.list("project"), args.rounds)
        line("list @ 500 entries", list_db, list_files)
        ratio = percentile(write_db, 0.95) / percentile(write_files, 0.95)
        print(
            f"goals: write p95 <= 3x json: {ratio:.2f}x; "
            f"list p95 <= 50 ms: {percentile(list_db, 0.95):.1f} ms "
            f"(median of all list rounds {statistics.median(list_db):.1f} ms)"
        )


if __name__ == "__main__":
    main()
