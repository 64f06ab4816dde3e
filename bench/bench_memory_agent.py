"""Benchmark: the memory agent must not slow turns down.

A 10-turn scripted session, run twice in the same process against the fake server: with
extraction off (the baseline) and on, the memory model delayed 1 s per request. Prints the
ratio of the summed time-to-`turn_end` (target ≤ 1.05) and the prompt tokens the injected
memory adds to each main-model call.

Run: .venv/bin/python bench/bench_memory_agent.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages.utils import count_tokens_approximately

from invincat_server.runtime.config import load_settings
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.session import Session
from invincat_server.testing.fake_openai import FakeOpenAIServer

TURNS = 10
MEMORY_MODEL = "memory-model"


def steps(extraction: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(TURNS + 1):
        out.append({"match": {"model": "fake-model"}, "content": f"Answer {n}: noted."})
        if extraction:
            op = {
                "op": "create",
                "scope": "project",
                "section": "Conventions",
                "content": f"Convention number {n}: modules use snake_case name {n} for files",
                "confidence": "high",
                "score": 80,
                "score_reason": "explicit",
            }
            call = {"name": "submit_memory_operations", "arguments": {"operations": [op]}}
            out.append({"match": {"model": MEMORY_MODEL}, "tool_calls": [call], "delay": 1.0})
    return out


async def run(server: FakeOpenAIServer, extraction: bool) -> tuple[list[float], list[int]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / ".git").mkdir(parents=True)
        os.environ.update(
            INVINCAT_HOME=str(Path(tmp) / "home"),
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="k",
            INVINCAT_MODEL="fake-model",
            INVINCAT_MEMORY_MODEL=MEMORY_MODEL,
            INVINCAT_MEMORY_EXTRACTION="on" if extraction else "off",
        )
        server.reset()
        server.add_steps(steps(extraction))
        times: list[float] = []
        async with Session(load_settings(), Workspace(root)) as session:
            thread = None
            for n in range(TURNS):
                start = time.perf_counter()
                turn = await session.start_turn(f"remember convention {n} about file names", thread)
                thread = turn.thread_id
                async for event in turn.events():
                    if event.type == "turn_end":
                        times.append(time.perf_counter() - start)
            # Then let every extraction land and run one more turn: what does the injected
            # memory cost each main-model call once it exists?
            for t in list(session._turns.values()):
                for task in t.followups:
                    await task
            turn = await session.start_turn("and one more question", thread)
            await turn.wait()
            system_tokens = [
                count_tokens_approximately([("system", r["messages"][0]["content"])])
                for r in server.chat_requests()
                if r.get("model") == "fake-model"
            ]
        return times, system_tokens


async def main() -> None:
    with FakeOpenAIServer() as server:
        await run(server, extraction=False)  # warm-up: imports, caches, first connections
        off, base_tokens = await run(server, extraction=False)
        on, tokens = await run(server, extraction=True)
    added = tokens[-1] - base_tokens[-1]
    print(f"{TURNS}-turn session, memory model delayed 1 s per request")
    print(f"  total time to turn_end  on {sum(on) * 1000:7.0f} ms   off {sum(off) * 1000:7.0f} ms")
    print(f"  ratio                   {sum(on) / sum(off):.3f}x (target <= 1.05)")
    entries = TURNS
    print(f"  injected memory per main-model call with {entries} entries: +{added} tokens")


if __name__ == "__main__":
    asyncio.run(main())
