"""Redaction: speed on source text, and coverage of credential formats.

    .venv/bin/python bench/bench_redaction.py

1. Speed: `redact()` over 1 MB of library source (langchain_core, pydantic), whole and in
   20 KB pieces (the size of one memory-model request), against a plain `re` pass that
   substitutes one token pattern over the same text in the same run. Also the one-time
   cost of loading detect-secrets' rules.
2. Coverage: the fake credentials of tests/memory/credentials.py (over 40 formats, fresh
   values, 20 rounds), as found by `redact()` and by detect-secrets' per-format rules
   alone (its regex plugins, unwidened): caught whole, caught only in part, missed.

False positives on ordinary code: bench/redaction_false_positives.py.
"""

from __future__ import annotations

import importlib
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MB = 1_000_000
PIECE = 20_000


def source_text(size: int) -> str:
    parts: list[str] = []
    total = 0
    for name in ("langchain_core", "pydantic"):
        module = importlib.import_module(name)
        for path in sorted(Path(module.__file__).parent.rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="replace")
            parts.append(text)
            total += len(text)
            if total >= size:
                return "".join(parts)[:size]
    return "".join(parts)[:size]


def median_ms(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def speed() -> None:
    started = time.perf_counter()
    from invincat_server.runtime.memory.redaction import redact
    from invincat_server.runtime.memory.secret_formats import all_formats

    all_formats()
    load_ms = (time.perf_counter() - started) * 1000
    text = source_text(MB)
    pieces = [text[i : i + PIECE] for i in range(0, len(text), PIECE)]
    plain = re.compile(r"[A-Za-z0-9+/_-]{24,}")
    baseline = median_ms(lambda: plain.sub("x", text))
    whole = median_ms(lambda: redact(text))
    chunked = median_ms(lambda: [redact(p) for p in pieces])
    print(f"redaction speed, {len(text) / MB:.1f} MB of library source (median of 5)")
    print(f"  load redaction + detect-secrets rules (first use)  {load_ms:8.1f} ms")
    print(f"  plain re pass (one token pattern, sub)          {baseline:8.1f} ms")
    print(
        f"  redact() whole text                             {whole:8.1f} ms"
        f"  {whole / baseline:5.1f}x"
    )
    print(
        f"  redact() in {len(pieces)} pieces of 20 KB                  {chunked:8.1f} ms"
        f"  {chunked / baseline:5.1f}x  ({chunked / len(pieces):.2f} ms per piece)"
    )


def coverage(rounds: int = 20) -> None:
    from invincat_server.runtime.memory.redaction import redact
    from invincat_server.runtime.memory.secret_formats import library_formats
    from tests.memory.credentials import credentials

    ours = {"whole": 0, "missed": 0}
    theirs = {"whole": 0, "part": 0, "missed": 0}
    missed_by_them: set[str] = set()
    partly_by_them: set[str] = set()
    missed_by_us: set[str] = set()
    total = 0
    for _ in range(rounds):
        for cred in credentials():
            total += 1
            if cred.secret in redact(cred.text).text:
                ours["missed"] += 1
                missed_by_us.add(cred.provider)
            else:
                ours["whole"] += 1
            found = [
                m.group(0) for fmt in library_formats() for m in fmt.pattern.finditer(cred.text)
            ]
            if any(cred.secret in f for f in found):
                theirs["whole"] += 1
            elif any(f and (f in cred.secret or cred.secret[:8] in f) for f in found):
                theirs["part"] += 1
                partly_by_them.add(cred.provider)
            else:
                theirs["missed"] += 1
                missed_by_them.add(cred.provider)
    formats = len(credentials())
    print(f"\ncoverage: {formats} credential formats x {rounds} fresh values = {total}")
    print(f"  redact()                         whole {ours['whole']:4}  missed {ours['missed']:4}")
    print(
        f"  detect-secrets' format rules     whole {theirs['whole']:4}  part {theirs['part']:4}"
        f"  missed {theirs['missed']:4}"
    )
    print(f"  formats its rules match only in part: {', '.join(sorted(partly_by_them))}")
    print(f"  formats its rules miss ({len(missed_by_them)}): {', '.join(sorted(missed_by_them))}")
    if missed_by_us:
        print("  formats redact() misses: " + ", ".join(sorted(missed_by_us)))


if __name__ == "__main__":
    speed()
    coverage()
