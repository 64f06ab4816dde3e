"""Count what redaction replaces in ordinary source code (none of it holds real secrets).

    .venv/bin/python bench/redaction_false_positives.py [--show N] [--detect-secrets]

Scans this repository's .py/.ts/.lua files and the installed sources of a few libraries,
file by file, and prints redactions per kind and per MB, with examples. Paths (`~`,
`<tmp>`) are not counted: they are abbreviated on purpose. With `--detect-secrets`, also
counts what detect-secrets' own scanner (all plugins, default settings) flags, line by
line, in the same files.
"""

from __future__ import annotations

import argparse
import importlib
import re
import time
from collections import Counter
from pathlib import Path

from invincat_server.runtime.memory.redaction import redact

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = ("langchain_core", "pydantic", "httpx", "pygls", "requests", "yaml", "aiosqlite")
_PLACEHOLDER = re.compile(r"\[REDACTED:([a-z_]+)\]")


def corpus() -> list[Path]:
    files = [
        p
        for ext in ("py", "ts", "lua")
        for p in ROOT.rglob(f"*.{ext}")
        if not any(part in {".venv", "node_modules", ".git", "out"} for part in p.parts)
        and "fixtures" not in p.name
    ]
    for name in LIBRARIES:
        module = importlib.import_module(name)
        files += sorted(Path(module.__file__).parent.rglob("*.py"))
    return files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", type=int, default=3, help="examples per kind")
    parser.add_argument("--detect-secrets", action="store_true", help="also run its scanner")
    args = parser.parse_args()
    if args.detect_secrets:
        scanner_counts()
    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    size = 0
    started = time.perf_counter()
    files = corpus()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        size += len(text)
        new = redact(text).text
        for line in new.splitlines():
            for kind in _PLACEHOLDER.findall(line):
                counts[kind] += 1
                shown = examples.setdefault(kind, [])
                if len(shown) < args.show:
                    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                    shown.append(f"{rel}: {line.strip()[:110]}")
    elapsed = time.perf_counter() - started
    mb = size / 1e6
    print(f"{len(files)} files, {mb:.1f} MB, {elapsed:.1f} s")
    print(f"redactions: {sum(counts.values())} ({sum(counts.values()) / mb:.1f} per MB)")
    for kind, n in counts.most_common():
        print(f"  {kind:20} {n}")
        for example in examples[kind]:
            print(f"      {example}")


def scanner_counts() -> None:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    counts: Counter[str] = Counter()
    with default_settings():
        for path in corpus():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                for found in scan_line(line):
                    counts[found.type] += 1
    print(f"detect-secrets scanner: {sum(counts.values())} findings")
    for kind, n in counts.most_common():
        print(f"  {kind:32} {n}")


if __name__ == "__main__":
    main()
