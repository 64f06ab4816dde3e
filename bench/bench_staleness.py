"""Staleness checks of cited memory: what they add to a turn when nothing changed.

Run: .venv/bin/python bench/bench_staleness.py [--quick]

Setup: a project with 200 files and 200 active project entries (hot and warm), each
citing 5 lines of its own file (the worst case: one stat per entry). Measured per turn,
with nothing changed:
- the memory render before a model call (`render_injection`, which checks every cited
  injectable entry) vs the same 200 entries without citations (the baseline, same run);
- the post-turn check (`reanchor`, which finds nothing to do): background work after
  `turn_end`, so not part of the turn's latency; reported separately and summed;
- the floor: 200 bare `os.stat` calls, what any stat-based check must pay.
Also: the first render after one cited file changed (one file re-read and re-hashed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from invincat_server.runtime.memory import MemoryLimits, MemoryService

ENTRIES = 200
BIG = MemoryLimits(max_active=1_000, max_archived=1_000)


def _seed(project: Path, cited: bool) -> MemoryService:
    (project / ".git").mkdir(parents=True)
    src = project / "src"
    src.mkdir()
    for n in range(ENTRIES):
        body = "\n".join(f"def helper_{n}_{k}(x):  # convention c{n} line {k}" for k in range(40))
        (src / f"mod_{n}.py").write_text(body + "\n")
    service = MemoryService(project.parent / f"home-{cited}", project, limits=BIG)
    service.home.mkdir(exist_ok=True)
    for start in range(0, ENTRIES, 20):
        ops = []
        for n in range(start, start + 20):
            op: dict[str, object] = {
                "op": "create",
                "scope": "project",
                "section": f"Module {n}",
                "content": f"mod_{n} helpers follow convention c{n} with unique marker z{n}q",
                "score": 40 + (n * 7) % 60,
            }
            if cited:
                op["citations"] = [{"path": f"src/mod_{n}.py", "start_line": 10, "end_line": 14}]
            ops.append(op)
        report = service.apply("project", ops)
        assert not report.dropped, report.dropped
    return service


def _times(fn: Callable[[], object], runs: int) -> list[float]:
    fn()  # warm the caches: a turn's renders after the first are what we measure
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    runs = 50 if parser.parse_args().quick else 500
    with tempfile.TemporaryDirectory() as tmp:
        cited = _seed(Path(tmp) / "cited" / "project", cited=True)
        plain = _seed(Path(tmp) / "plain" / "project", cited=False)
        assert len(cited.verify("project")) == ENTRIES

        files = [str(cited.project_root / "src" / f"mod_{n}.py") for n in range(ENTRIES)]
        floor = _times(lambda: [os.stat(f) for f in files], runs)
        base = _times(plain.render_injection, runs)
        render = _times(cited.render_injection, runs)
        post = _times(cited.reanchor, runs)

        changed = []
        for n in range(min(runs, 50)):
            path = cited.project_root / "src" / f"mod_{n % ENTRIES}.py"
            path.write_text(path.read_text() + f"# edit {n}\n")  # outside the cited lines
            started = time.perf_counter()
            cited.render_injection()
            changed.append((time.perf_counter() - started) * 1000)

    added = _p95(render) - _p95(base)
    print(f"{ENTRIES} cited entries, nothing changed, {runs} runs")
    print(
        f"  floor: {ENTRIES} os.stat calls  p50 {statistics.median(floor):6.3f} ms  "
        f"p95 {_p95(floor):6.3f} ms"
    )
    print(
        f"  render before a model call  p50 {statistics.median(render):6.3f} ms  "
        f"p95 {_p95(render):6.3f} ms   vs floor {_p95(render) / _p95(floor):.1f}x"
    )
    print(
        f"  baseline (no citations)     p50 {statistics.median(base):6.3f} ms  "
        f"p95 {_p95(base):6.3f} ms   ratio {_p95(render) / _p95(base):.1f}x"
    )
    print(
        f"  post-turn re-anchor check   p50 {statistics.median(post):6.3f} ms  "
        f"p95 {_p95(post):6.3f} ms"
    )
    print(
        f"  added before each model call (p95 render - p95 baseline) {added:6.3f} ms "
        f"(target <= 5 ms: {'met' if added <= 5 else 'NOT met'})"
    )
    both = added + _p95(post)
    print(f"  with the post-turn check (after turn_end, in the background) {both:6.3f} ms")
    print(
        f"one cited file changed: render p50 {statistics.median(changed):6.3f} ms  "
        f"p95 {_p95(changed):6.3f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
