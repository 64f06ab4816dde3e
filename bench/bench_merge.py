"""Benchmark: the governed merge driver on two 500-entry stores, against git's text merge.

A common ancestor of 450 entries (numbered ids, as older stores have them); each side
then makes 100 changes: 50 new entries (time-ordered random ids, as every create gets
now: none clash) and 50 updates, 10 of them to entries the other side also updated
(decided by `updated_at`). Each side holds 500 entries.

Measured, median of N runs, in the same run:
- `invincat memory merge-driver O A B P` as git runs it: a new process (start-up,
  imports, parsing, the secret check, the merge, the journal append under the lock,
  writing the result); each run on fresh copies and a fresh journal;
- the same merge in-process (`merge_store_files`), without process start;
- the baseline: `git merge-file -p A O B` on the same three files (a text merge, which
  for these stores ends in conflicts: that is what the driver replaces).

Goal (issue 25): under 0.5 s including process start.

Run: .venv/bin/python bench/bench_merge.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from invincat_server.runtime.memory.ids import new_id
from invincat_server.runtime.memory.merge_driver import STORE_PATH, MergeSides, merge_store_files
from invincat_server.runtime.memory.models import Entry
from invincat_server.runtime.memory.store import StoreState, dump_state

INVINCAT = str(Path(sys.executable).with_name("invincat"))
BASE_ENTRIES, CREATES, UPDATES, BOTH = 450, 50, 50, 10


def _entry(seq: int, content: str, when: str, entry_id: str | None = None) -> Entry:
    return Entry.model_validate(
        {
            "id": entry_id or f"mem_p_{seq:06d}",
            "scope": "project",
            "section": f"Section {seq % 7}",
            "content": content,
            "score": 50 + seq % 40,
            "tier": "warm" if 50 + seq % 40 < 70 else "hot",
            "created_at": "2026-01-01T00:00:00.000000+00:00",
            "updated_at": when,
            "source": {"actor": "cli"},
        }
    )


def _stores() -> tuple[bytes, bytes, bytes]:
    base = {
        s: _entry(s, f"base fact {s}: module m{s} owns queue q{s}", "2026-01-01T00:00")
        for s in range(1, BASE_ENTRIES + 1)
    }
    sides = []
    for side, offset in (("ours", 0), ("theirs", UPDATES - BOTH)):
        entries = dict(base)
        for n in range(UPDATES):
            seq = 1 + offset + n  # the two sides' ranges overlap in BOTH entries
            entries[seq] = _entry(
                seq,
                f"{side} changed fact {seq}: now in pkg/{side}{seq}",
                f"2026-02-0{1 if side == 'ours' else 2}T00:00",
            )
        for n in range(CREATES):
            seq = BASE_ENTRIES + 1 + n + (CREATES if side == "theirs" else 0)
            entries[seq] = _entry(
                seq,
                f"{side} new fact {n}: {side} table t{n} col c{n}",
                "2026-03-01T00:00",
                new_id("project"),
            )
        sides.append(entries)

    def dump(entries: dict[int, Entry]) -> bytes:
        return dump_state(StoreState("project", entries={e.id: e for e in entries.values()}))

    return dump(base), dump(sides[0]), dump(sides[1])


def _fresh(work: Path, stores: tuple[bytes, bytes, bytes]) -> tuple[Path, MergeSides]:
    if work.exists():
        shutil.rmtree(work)
    (work / ".git").mkdir(parents=True)
    paths = []
    for name, data in zip(("O", "A", "B"), stores, strict=True):
        path = work / f".merge_file_{name}"
        path.write_bytes(data)
        paths.append(path)
    return work, MergeSides(*paths, name=STORE_PATH)


def _children_cpu() -> float:
    """User + system seconds of the finished child processes: what the driver costs
    whatever the load (wall time on a shared 2-core machine also waits for the CPU)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    stores = _stores()
    tmp = Path(tempfile.mkdtemp(prefix="bench-merge-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVINCAT_")}
    env["INVINCAT_HOME"] = str(tmp / "home")
    (tmp / "home").mkdir()
    driver, driver_cpu, floor, inproc, text = [], [], [], [], []
    merged_entries = 0
    try:
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor.append(time.perf_counter() - started)

            work, sides = _fresh(tmp / "repo", stores)
            cpu_before = _children_cpu()
            started = time.perf_counter()
            done = subprocess.run(
                [
                    INVINCAT,
                    "memory",
                    "merge-driver",
                    *(str(p.name) for p in (sides.base, sides.ours, sides.theirs)),
                    STORE_PATH,
                ],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            driver.append(time.perf_counter() - started)
            driver_cpu.append(_children_cpu() - cpu_before)
            if done.returncode != 0:
                raise SystemExit(f"merge-driver failed: {done.stderr}")
            merged_entries = sides.ours.read_bytes().count(b'"id":')

            work, sides = _fresh(tmp / "repo", stores)
            started = time.perf_counter()
            merge_store_files(work, tmp / "home", sides)
            inproc.append(time.perf_counter() - started)

            work, sides = _fresh(tmp / "repo", stores)
            started = time.perf_counter()
            subprocess.run(
                ["git", "merge-file", "-p", str(sides.ours), str(sides.base), str(sides.theirs)],
                capture_output=True,
                check=False,
            )
            text.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    d, c, i, t = (_median_ms(x) for x in (driver, driver_cpu, inproc, text))
    f = _median_ms(floor)
    print(
        f"two stores of 500 entries, {CREATES + UPDATES} changes per side ({BOTH} entries "
        f"changed on both sides, {CREATES} creates), median of {runs}, "
        f"load average {os.getloadavg()[0]:.1f}:"
    )
    verdict = "met" if d < 500 else "not met"
    print(f"  invincat memory merge-driver, wall       {d:7.0f} ms   goal < 500 ms: {verdict}")
    print(f"  invincat memory merge-driver, CPU        {c:7.0f} ms   (user + system)")
    print(f"  python -c pass (process floor), wall     {f:7.0f} ms")
    print(f"  the same merge in-process                {i:7.0f} ms")
    print(f"  git merge-file -p (text merge, baseline) {t:7.0f} ms   ratio {d / t:.0f}x (wall)")
    print(f"  merged store: {merged_entries} entries (450 base + 50 ours + 50 theirs)")


if __name__ == "__main__":
    main()
