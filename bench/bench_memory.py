"""Memory store benchmarks: governed apply, injection rendering, multi-process contention.

Run: .venv/bin/python bench/bench_memory.py [--quick]

Every figure is printed next to a floor measured in the same run on the same data, so the
ratio says what governance costs on top of the unavoidable I/O:
- apply: a 20-op batch (10 creates, 4 updates, 3 rescores, 2 archives, 1 delete) vs a
  raw `json.load` + `json.dump` + temp file + fsync + `os.replace` of the same store;
- injection: uncached render vs a raw `json.loads` of the store; cached render vs `os.stat`;
- contention: 4 processes applying single-create batches to one store vs 1 process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from invincat_server.runtime.memory import MemoryLimits, MemoryService
from invincat_server.runtime.memory.models import Entry, new_id, now_iso, tier_for
from invincat_server.runtime.memory.store import StoreState, dump_state

BIG = MemoryLimits(max_active=1_000_000, max_archived=1_000_000)
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()


def _content(n: int) -> str:
    words = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(6))
    return f"Fact {n}: the {words} module uses convention c{n} for tests and builds"


def seed_store(project: Path, size: int) -> None:
    """Write a valid project store of `size` active entries directly (no governance)."""
    now = now_iso()
    entries = {}
    for n in range(1, size + 1):
        score = (n * 37) % 101
        entry = Entry(
            id=new_id("project"),
            scope="project",
            section=f"Section {n % 12}",
            content=_content(n),
            score=score,
            tier=tier_for(score),
            score_reason="seeded",
            created_at=now,
            updated_at=now,
            source={"actor": "bench", "evidence": []},  # type: ignore[arg-type]
        )
        entries[entry.id] = entry
    state = StoreState("project", entries=entries)
    path = project / ".invincat" / "memory_project.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_state(state))


def batch_for(service: MemoryService, round_no: int) -> list[dict[str, object]]:
    active = [e.id for e in service.list("project")]
    pick = active[round_no * 10 % max(1, len(active) - 10) :][:10]
    ops: list[dict[str, object]] = [
        {
            "op": "create",
            "scope": "project",
            "section": "Bench",
            "content": f"bench round {round_no} new fact {k} zq{round_no}x{k} uses tool t{k}",
        }
        for k in range(10)
    ]
    ops += [
        {"op": "update", "scope": "project", "id": i, "content": f"updated r{round_no} {i}"}
        for i in pick[:4]
    ]
    ops += [
        {"op": "rescore", "scope": "project", "id": i, "score": 55, "score_reason": "bench"}
        for i in pick[4:7]
    ]
    ops += [{"op": "archive", "scope": "project", "id": i, "reason": "bench"} for i in pick[7:9]]
    ops += [{"op": "delete", "scope": "project", "id": i, "reason": "bench"} for i in pick[9:10]]
    return ops


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def raw_rewrite(path: Path) -> None:
    """The floor for a durable rewrite: parse, serialise, temp file, fsync, rename, fsync dir."""
    doc = json.loads(path.read_bytes())
    data = (json.dumps(doc, ensure_ascii=False) + "\n").encode()  # C encoder: the fastest
    tmp = path.with_name(path.name + ".raw.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def bench_apply(size: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        seed_store(project, size)
        service = MemoryService(home, project, limits=BIG)
        service.list()  # the first read journals the seeded store as an external change
        store = service.store_paths()["project"]
        applies, floors = [], []
        for r in range(rounds):
            ops = batch_for(service, r)
            applies.append(timed(lambda ops=ops: service.apply("project", ops)))
            floors.append(timed(lambda: raw_rewrite(store)))
        p50, p95 = statistics.median(applies), percentile(applies, 0.95)
        f50 = statistics.median(floors)
        print(
            f"apply 20 ops @ {size:>5} entries: p50 {p50:7.1f} ms  p95 {p95:7.1f} ms   "
            f"floor p50 {f50:6.1f} ms   ratio {p50 / f50:4.1f}x"
        )


def bench_injection(size: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        seed_store(project, size)
        service = MemoryService(home, project, limits=BIG)
        service.list()
        store = service.store_paths()["project"]
        uncached = []
        for _ in range(rounds):
            service.renderer.invalidate()
            service._stores["project"]._cache = None  # also drop the parsed-store cache
            uncached.append(timed(service.render_injection))
        cached = [timed(service.render_injection) for _ in range(rounds * 20)]
        floor = [timed(lambda: json.loads(store.read_bytes())) for _ in range(rounds)]
        stat_floor = [timed(lambda: os.stat(store)) for _ in range(rounds * 20)]
        u, c = statistics.median(uncached), statistics.median(cached)
        f, s = statistics.median(floor), statistics.median(stat_floor)
        print(
            f"render injection @ {size} entries: uncached p50 {u:7.2f} ms (json.loads floor "
            f"{f:.2f} ms, {u / f:.1f}x)   cached p50 {c * 1000:6.1f} us (os.stat "
            f"{s * 1000:.1f} us, {c / s:.1f}x)"
        )


WORKER = r"""
import sys, time
from pathlib import Path
from invincat_server.runtime.memory import MemoryService
home, project, tag, count, start_at = sys.argv[1:6]
service = MemoryService(Path(home), Path(project))
while time.time() < float(start_at):
    time.sleep(0.001)
t0 = time.perf_counter()
for i in range(int(count)):
    op = {"op": "create", "scope": "project", "section": "Load",
          "content": f"{tag} fact {i} q{tag}z{i} about module m{i}"}
    service.apply("project", [op], actor="bench")
print(time.perf_counter() - t0)
"""


def run_workers(n_procs: int, per_proc: int) -> float:
    """Batches per second for `n_procs` processes applying `per_proc` batches each."""
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        (project / ".git").mkdir(parents=True)
        (home / "config.toml").write_text("[memory]\nmax_active = 100000\n")
        start_at = time.time() + 1.5  # every interpreter is up and imported by then
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    WORKER,
                    str(home),
                    str(project),
                    f"w{n}",
                    str(per_proc),
                    str(start_at),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            for n in range(n_procs)
        ]
        outs = [p.communicate(timeout=600)[0] for p in procs]
        elapsed = max(float(out.strip().splitlines()[-1]) for out in outs)
        return n_procs * per_proc / elapsed


def bench_contention(per_proc: int) -> None:
    solo = run_workers(1, per_proc * 4)
    four = run_workers(4, per_proc)
    print(
        f"contention: 4 processes x {per_proc} batches: {four:6.1f} batches/s   "
        f"1 process x {per_proc * 4}: {solo:6.1f} batches/s   ratio {four / solo:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (smoke run)")
    args = parser.parse_args()
    rounds = 5 if args.quick else 30
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, tmp {tempfile.gettempdir()}")
    for size, n in ((100, rounds), (250, rounds), (5000, max(5, rounds // 2))):
        bench_apply(size, n)
    bench_injection(5000, max(5, rounds // 3))
    bench_contention(10 if args.quick else 50)


if __name__ == "__main__":
    main()
