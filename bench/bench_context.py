"""Benchmark: context management over a 30-turn session, each turn reading a 4,000-line file.

Prints total prompt tokens sent with compaction vs with it disabled (the baseline, same run,
same script; target ≤ 0.5x) and the time spent in compaction per model call (p50, p99;
target p50 ≤ 5 ms).

Run: .venv/bin/python bench/bench_context.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages.utils import count_tokens_approximately

from invincat_server.runtime.config import load_settings
from invincat_server.runtime.context.middleware import SUMMARY_SYSTEM_PROMPT, ContextMiddleware
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.session import Session
from invincat_server.testing.fake_openai import FakeOpenAIServer

TURNS, LINES = 30, 4_000


def steps() -> list[dict[str, Any]]:
    # Summary requests of auto-compaction are answered by these (matched on the prompt).
    summary = {"match": {"system_contains": SUMMARY_SYSTEM_PROMPT[:40]}, "content": "Files read."}
    out: list[dict[str, Any]] = [dict(summary) for _ in range(TURNS)]
    for n in range(1, TURNS + 1):
        call = {"name": "read_file", "arguments": {"path": f"f{n:02d}.txt", "limit": LINES}}
        out += [{"tool_calls": [call]}, {"content": f"Read file {n}."}]
    return out


async def session_tokens(server: FakeOpenAIServer, compaction: bool, timings: list[float]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / ".git").mkdir(parents=True)
        for n in range(1, TURNS + 1):
            (root / f"f{n:02d}.txt").write_text("".join(f"f{n} line {i}\n" for i in range(LINES)))
        os.environ.update(
            INVINCAT_HOME=str(Path(tmp) / "home"),
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="k",
            INVINCAT_MODEL="fake-model",
            INVINCAT_MICRO_COMPACTION=str(compaction).lower(),
            INVINCAT_AUTO_COMPACTION=str(compaction).lower(),
        )
        server.reset()
        server.add_steps(steps())
        async with Session(load_settings(), Workspace(root), auto_approve=True) as session:
            thread = None
            for n in range(1, TURNS + 1):
                turn = await session.start_turn(f"read file {n}", thread)
                thread = turn.thread_id
                assert await turn.wait() == "completed"
        return sum(count_tokens_approximately(r["messages"]) for r in server.chat_requests())


def instrument(timings: list[float]) -> None:
    """Time the compaction work done per model call (before_model check + request view)."""
    original_view = ContextMiddleware.model_view
    original_before = ContextMiddleware.abefore_model

    def timed_view(self: ContextMiddleware, messages: Any, compaction: Any) -> Any:
        start = time.perf_counter()
        try:
            return original_view(self, messages, compaction)
        finally:
            timings.append(time.perf_counter() - start)

    async def timed_before(self: ContextMiddleware, state: Any, runtime: Any) -> Any:
        start = time.perf_counter()
        try:
            return await original_before(self, state, runtime)
        finally:
            timings[-1:] = [timings[-1] + time.perf_counter() - start] if timings else []

    ContextMiddleware.model_view = timed_view  # type: ignore[method-assign]
    ContextMiddleware.abefore_model = timed_before  # type: ignore[method-assign]


async def main() -> None:
    timings: list[float] = []
    instrument(timings)
    with FakeOpenAIServer() as server:
        baseline = await session_tokens(server, compaction=False, timings=[])
        timings.clear()
        compacted = await session_tokens(server, compaction=True, timings=timings)
        summaries = sum(
            1 for r in server.chat_requests() if SUMMARY_SYSTEM_PROMPT[:40] in str(r["messages"][0])
        )
    ms = sorted(t * 1000 for t in timings)
    print(f"{TURNS}-turn session, each turn reads a {LINES}-line file (60 model calls)")
    print(f"  prompt tokens sent  compaction {compacted:>10,}   disabled {baseline:>10,}")
    print(f"  auto-compactions (summary calls)  {summaries}")
    print(f"  ratio               {compacted / baseline:.2f}x (target <= 0.5x)")
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(f"  compaction time per model call  p50 {statistics.median(ms):.2f} ms  p99 {p99:.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
