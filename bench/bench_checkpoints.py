"""Benchmark: the rewind checkpoint of a turn whose shell command changes 3 files of a
3,000-file / 80 MB git work tree, and the storage after 50 such turns (issue 24).

Per turn, measured in the same run on the same tree:
- invincat: `TurnRecorder.command()` around the command (snapshot of the tracked and
  unignored files before it, the changed paths recorded after; runtime/checkpoints);
- `cp` of the 3 changed files to a folder (the least any checkpoint can do);
- `git stash create` (git's own snapshot of the work tree; it writes objects but no ref).
The first snapshot of a project copies the whole tree once: it is printed apart.

Storage: the project's checkpoint folder after the 50 turns, vs the changed content (the
bytes of the 150 files as they were before each change, what a rewind must have), with
and without the first snapshot's copies no checkpoint names (dropped when over the cap).

Run: .venv/bin/python bench/bench_checkpoints.py
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from invincat_server.runtime.checkpoints.pruning import collect_garbage, storage_bytes
from invincat_server.runtime.checkpoints.recorder import TurnRecorder
from invincat_server.runtime.checkpoints.store import ObjectStore

FILES, TOTAL_BYTES, TURNS, CHANGED = 3000, 80 * 1024 * 1024, 50, 3
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
}


def make_tree(root: Path) -> list[str]:
    rng = random.Random(24)
    size = TOTAL_BYTES // FILES
    names = [f"pkg{n % 60:02d}/mod{n:04d}.py" for n in range(FILES)]
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rng.randbytes(size // 2).hex().encode()[:size])
    (root / ".gitignore").write_text("build/\n")
    for argv in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "t"]):
        subprocess.run(argv, cwd=root, env=GIT_ENV, check=True)
    return names


def change(root: Path, names: list[str], turn: int) -> list[str]:
    picked = random.Random(turn).sample(names, CHANGED)
    for name in picked:
        with open(root / name, "ab") as fh:
            fh.write(f"# turn {turn}\n".encode())
    return picked


async def invincat_turn(
    store: ObjectStore, root: Path, names: list[str], turn: int
) -> tuple[float, int]:
    """(seconds of checkpoint work, bytes of the changed files before the change)."""
    recorder = TurnRecorder(store, "t_bench", lambda: (turn, f"m{turn}"))
    picked = random.Random(turn).sample(names, CHANGED)
    before = sum((root / name).stat().st_size for name in picked)
    start = time.perf_counter()
    async with recorder.command():
        inside = time.perf_counter()
        change(root, names, turn)
        resumed = time.perf_counter()
    return (time.perf_counter() - start) - (resumed - inside), before


def cp_turn(root: Path, dest: Path, names: list[str], turn: int) -> float:
    picked = random.Random(turn).sample(names, CHANGED)
    target = dest / str(turn)
    target.mkdir(parents=True)
    start = time.perf_counter()
    subprocess.run(["cp", *(str(root / n) for n in picked), str(target)], check=True)
    return time.perf_counter() - start


def stash_turn(root: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["git", "stash", "create"], cwd=root, env=GIT_ENV, check=True, capture_output=True
    )
    return time.perf_counter() - start


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root, home, copies = Path(tmp) / "ws", Path(tmp) / "home", Path(tmp) / "copies"
        root.mkdir()
        names = make_tree(root)
        store = ObjectStore(home, root)
        start = time.perf_counter()
        first, _ = await invincat_turn(store, root, names, 0)
        first_wall = time.perf_counter() - start
        ours, cps, stashes, changed = [], [], [], 0
        for turn in range(1, TURNS + 1):
            seconds, before = await invincat_turn(store, root, names, turn)
            ours.append(seconds)
            changed += before
            cps.append(cp_turn(root, copies, names, turn))
            stashes.append(stash_turn(root))
        stored = storage_bytes(store)
        collect_garbage(store, keep_cached=False)  # the snapshot's copies too
        named = storage_bytes(store)
        mib = 1024 * 1024
        o, c, s = (statistics.median(x) for x in (ours, cps, stashes))
        lines = [
            f"tree: {FILES} files, {TOTAL_BYTES / mib:.0f} MiB, a git work tree; "
            f"{CHANGED} files changed per turn",
            f"first snapshot (copies the tree once)  {ms(first)} (wall {ms(first_wall)})",
            f"checkpoint per turn, median of {TURNS}:",
            f"  invincat (snapshot before + after)   {ms(o)}",
            f"  cp of the {CHANGED} changed files           {ms(c)}   invincat/cp    {o / c:6.1f}x",
            f"  git stash create                     {ms(s)}   invincat/stash {o / s:6.2f}x",
            f"storage after {TURNS} turns (changed content {changed / mib:.2f} MiB):",
            f"  with the first snapshot's copies     {stored / mib:8.2f} MiB"
            f"   ratio {stored / changed:6.1f}x",
            f"  what checkpoints name (after gc)     {named / mib:8.2f} MiB"
            f"   ratio {named / changed:6.2f}x",
        ]
        print("\n".join(lines))
        shutil.rmtree(copies, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
