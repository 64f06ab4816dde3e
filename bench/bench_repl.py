"""Benchmark: time until the REPL's prompt is usable, at a real pty, vs `invincat --help`.

Each figure is spawn → the REPL prompt drawn (prompt_toolkit reads keys from then on) for
`invincat chat` in a terminal (pexpect, 200x40):
1. warm: the default, served by a worker of the warm server (docs/warm-server.md), which
   is already running (median of N runs);
2. the first start, which finds no server, starts one and waits for it (printed apart);
3. cold: `INVINCAT_WARM=0`, the stack imported in the REPL's own process (median of N);
and, in the same run, spawn → exit of `invincat --help` at the same pty (median of N),
the floor of any `invincat` command. Each run has a fresh $INVINCAT_HOME and the fake
OpenAI server as its model (no model call is made before the prompt).

Run: .venv/bin/python bench/bench_repl.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pexpect

from invincat_server.testing.fake_openai import FakeOpenAIServer

INVINCAT = str(Path(sys.executable).with_name("invincat"))
PROMPT = "›"  # the prompt; escape codes may stand for the space after it
DEADLINE = 120.0
ESCAPES = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b.")


def _spawn(args: list[str], env: dict[str, str]) -> pexpect.spawn:
    return pexpect.spawn(
        INVINCAT, args, env=env, encoding="utf-8", timeout=DEADLINE, dimensions=(40, 200)
    )


def time_to_prompt(env: dict[str, str], workspace: Path) -> float:
    """Seconds from spawn to the prompt drawn; then leaves with Ctrl-D."""
    start = time.monotonic()
    child = _spawn(["chat", "--cwd", str(workspace)], env)
    raw = ""
    while PROMPT not in ESCAPES.sub("", raw):
        raw += child.read_nonblocking(65536, timeout=DEADLINE)
    elapsed = time.monotonic() - start
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return elapsed


def time_to_exit(env: dict[str, str]) -> float:
    start = time.monotonic()
    child = _spawn(["--help"], env)
    child.expect(pexpect.EOF)
    child.close()
    return time.monotonic() - start


def _stop_servers(runtime: Path) -> None:
    for log in (runtime / "invincat").glob("chat-*.log"):
        for pid in re.findall(r"serving \S+ \(version \w+, pid (\d+)\)", log.read_text()):
            try:
                os.kill(int(pid), signal.SIGTERM)
            except ProcessLookupError:
                pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    fake = FakeOpenAIServer().start_in_thread()
    scratch = Path(tempfile.mkdtemp(prefix="bench-repl-"))
    runtime = Path(tempfile.mkdtemp(prefix="bench-xdg-"))  # short: a socket path's limit
    workspace = scratch / "project"
    (workspace / ".git").mkdir(parents=True)
    homes = iter(range(10_000))

    def env(warm: str) -> dict[str, str]:
        home = scratch / f"home-{next(homes)}"
        home.mkdir()
        return {
            **os.environ,
            "INVINCAT_HOME": str(home),
            "HOME": str(scratch),
            "OPENAI_BASE_URL": fake.base_url,
            "OPENAI_API_KEY": "sk-bench",
            "INVINCAT_MODEL": "fake-model",
            "INVINCAT_MEMORY_EXTRACTION": "off",
            "INVINCAT_WARM": warm,
            "XDG_RUNTIME_DIR": str(runtime),
            "PROMPT_TOOLKIT_NO_CPR": "1",  # pexpect answers no cursor-position request
            "TERM": "xterm-256color",
        }

    def median(measure: Callable[[], float]) -> float:
        return statistics.median(measure() for _ in range(runs)) * 1000

    try:
        print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, median of {runs}")
        first = time_to_prompt(env("1"), workspace) * 1000
        warm = median(lambda: time_to_prompt(env("1"), workspace))
        cold = median(lambda: time_to_prompt(env("0"), workspace))
        help_ms = median(lambda: time_to_exit(env("0")))
        print("spawn → REPL prompt at a pty")
        print(f"  invincat chat, warm server        {warm:7.0f} ms   (target <= 500 ms)")
        print(f"  invincat chat, first start        {first:7.0f} ms   (starts the server)")
        print(f"  invincat chat, cold (WARM=0)      {cold:7.0f} ms")
        print(f"  invincat --help (spawn → exit)    {help_ms:7.0f} ms")
        print(f"  ratio warm / --help               {warm / help_ms:7.2f}x")
        print(f"  ratio cold / warm                 {cold / warm:7.2f}x")
    finally:
        _stop_servers(runtime)
        fake.stop_thread()
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(runtime, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
