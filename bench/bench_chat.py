"""Benchmark: `invincat chat --yes` one-shot, a 5-tool-call turn, zero model latency.

Prints wall time and peak RSS of the real CLI process, next to a baseline measured in the
same run: a bare script that makes the same six streamed ChatOpenAI calls and performs the
same five file/shell operations directly (no agent, no checkpoint, no approvals). The
difference is what Invincat's machinery costs. Time spent outside the model = invincat wall
time minus the time the baseline spent inside the six model calls.

Run: .venv/bin/python bench/bench_chat.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer

# The import floor: what any process using this stack pays before doing anything.
IMPORT_STACK = (
    "import langchain.agents, langchain_openai, langgraph.checkpoint.sqlite.aio, aiosqlite"
)
INVINCAT = str(Path(sys.executable).with_name("invincat"))

TOOL_STEPS = [
    {"name": "write_file", "arguments": {"path": "notes.md", "content": "# Notes\nline\n"}},
    {"name": "read_file", "arguments": {"path": "notes.md"}},
    {
        "name": "edit_file",
        "arguments": {"path": "notes.md", "old_string": "line", "new_string": "LINE"},
    },
    {"name": "grep", "arguments": {"pattern": "LINE"}},
    {"name": "execute", "arguments": {"command": "wc -l notes.md"}},
]

BASELINE = str(Path(__file__).with_name("baseline_chat.py"))


def steps() -> list[dict]:
    out = [{"tool_calls": [call]} for call in TOOL_STEPS]
    out.append({"content": "All five done: notes.md written, read, edited, searched and counted."})
    return out


def measure_rss(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    import time

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out_chunks = []
    assert proc.stdout is not None
    for line in proc.stdout:
        out_chunks.append(line)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read() if proc.stderr else ""
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024, "".join(out_chunks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    inv_wall, inv_rss, base_wall, base_rss, in_model, imports = [], [], [], [], [], []
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            home, ws_a, ws_b = (Path(tmp) / f"{name}{run}" for name in ("home", "wsa", "wsb"))
            for d in (home, ws_a / ".git", ws_b):
                d.mkdir(parents=True)
            env = {
                **os.environ,
                "INVINCAT_HOME": str(home),
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "k",
                "INVINCAT_MODEL": "fake-model",
                # The turn itself is measured here; bench_memory_agent.py measures extraction.
                "INVINCAT_MEMORY_EXTRACTION": "off",
            }
            server.add_steps(steps())
            wall, rss, out = measure_rss(
                [INVINCAT, "chat", "do the five things", "--yes", "--json", "--cwd", str(ws_a)], env
            )
            events = [json.loads(line) for line in out.splitlines() if line.strip()]
            assert events[-1]["status"] == "completed", events[-1]
            assert len([e for e in events if e["type"] == "tool_result"]) == 5
            inv_wall.append(wall)
            inv_rss.append(rss)
            server.add_steps(steps())
            wall, rss, out = measure_rss(
                [sys.executable, BASELINE, server.base_url, str(ws_b)], env
            )
            base_wall.append(wall)
            base_rss.append(rss)
            in_model.append(json.loads(out)["in_model"])
            wall, _, _ = measure_rss([sys.executable, "-c", IMPORT_STACK], env)
            imports.append(wall)
    iw, bw, im = (statistics.median(x) for x in (inv_wall, base_wall, in_model))
    ir, br = statistics.median(inv_rss), statistics.median(base_rss)
    print(f"invincat chat --yes, 5 tool calls + answer (6 model calls), median of {args.runs} runs")
    print(
        f"  wall time  invincat {iw * 1000:7.0f} ms   baseline {bw * 1000:7.0f} ms"
        f"   ratio {iw / bw:.2f}x"
    )
    print(
        f"  peak RSS         invincat {ir:7.1f} MiB  baseline {br:7.1f} MiB  ratio {ir / br:.2f}x"
    )
    print(f"  inside the model (6 streamed calls, from baseline): {im * 1000:.0f} ms")
    floor = statistics.median(imports)
    print(f"  outside the model (invincat wall - model time):     {(iw - im) * 1000:.0f} ms")
    print(f"    of which importing the LangChain stack (floor):   {floor * 1000:.0f} ms")
    print(
        f"    of which Invincat itself (rest):                  {(iw - im - floor) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
