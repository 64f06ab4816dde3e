"""Benchmark: what the shell sandbox adds to the start of every `execute` command.

Times, median of RUNS each, same run and machine:
- bare `sh -c true` (the baseline: a fork and exec of a shell);
- `bwrap ... sh -c true` with the exact command line `execute` uses in `workspace-write`
  mode (namespaces, binds, tmpfs over the hidden folders; the private /tmp made and
  removed around it, as the tool does);
- the same in `read-only` mode;
- the whole `execute` tool (pipe, process group, kill, output), unconfined and sandboxed;
and prints each as a ratio to its baseline.

Run: .venv/bin/python bench/bench_sandbox.py
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.sandbox import ExecuteSandbox, SandboxSpec
from invincat_server.runtime.tools import build_core_tools

RUNS = 50


def median_ms(run: Callable[[], object], runs: int = RUNS) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def sandbox_for(spec: SandboxSpec, root: Path, home: Path, bwrap: str) -> ExecuteSandbox:
    return ExecuteSandbox(spec, root=root, home=home, bwrap=bwrap, unavailable=None)


def run_argv(sandbox: ExecuteSandbox | None, shell: list[str], root: Path) -> None:
    if sandbox is None:
        subprocess.run(shell, cwd=root, check=True)
        return
    with sandbox.argv({}, shell) as argv:
        subprocess.run(argv, cwd=root, check=True)


def tool_ms(root: Path, sandbox: ExecuteSandbox | None) -> float:
    tools = {t.name: t for t in build_core_tools(Workspace(root), sandbox=sandbox)}
    execute = tools["execute"]

    async def many() -> list[float]:
        samples = []
        for _ in range(RUNS):
            start = time.perf_counter()
            await execute.ainvoke({"command": "true"})
            samples.append(time.perf_counter() - start)
        return samples

    return statistics.median(asyncio.run(many())) * 1000


def main() -> int:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        print("bwrap not found: nothing to measure (apt-get install bubblewrap)")
        return 0  # bench/run goes on with the other benchmarks
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        root, home = Path(folder) / "ws", Path(folder) / "home"
        (root / ".git").mkdir(parents=True)
        home.mkdir()
        shell = ["/bin/sh", "-c", "true"]
        write = sandbox_for(SandboxSpec("workspace-write"), root, home, bwrap)
        read = sandbox_for(SandboxSpec("read-only"), root, home, bwrap)
        for _ in range(5):  # warm the caches
            run_argv(write, shell, root)
        bare = median_ms(lambda: run_argv(None, shell, root))
        confined = median_ms(lambda: run_argv(write, shell, root))
        readonly = median_ms(lambda: run_argv(read, shell, root))
        tool_bare = tool_ms(root, None)
        tool_confined = tool_ms(root, write)
    print(f"start-up of one command, median of {RUNS} (python {sys.version.split()[0]})")
    print(f"  sh -c true                     {bare:7.2f} ms   baseline")
    print(f"  bwrap, workspace-write         {confined:7.2f} ms   {confined / bare:5.2f}x")
    print(f"  bwrap, read-only               {readonly:7.2f} ms   {readonly / bare:5.2f}x")
    print(f"  added per command              {confined - bare:7.2f} ms")
    print("the execute tool, `true`")
    print(f"  unconfined                     {tool_bare:7.2f} ms   baseline")
    ratio = tool_confined / tool_bare
    print(f"  sandboxed (workspace-write)    {tool_confined:7.2f} ms   {ratio:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
