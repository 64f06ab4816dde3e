"""Benchmark: size of threads.sqlite after 30 turns, each reading a different 60 KB file.

Prints the size of threads.sqlite (and its -wal file), the size of the transcript (the
thread's messages as `invincat/threads/history` returns them, JSON-encoded) and the ratio
(target ≤ 3x). The baseline, measured in the same run with the same script, is the same
session with checkpoint pruning switched off (what every version before pruning wrote).

Run: .venv/bin/python bench/bench_storage.py
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from invincat_server.runtime.config import load_settings
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.session import Session
from invincat_server.testing.fake_openai import FakeOpenAIServer

TURNS, FILE_BYTES, LINE = 30, 60 * 1024, 60


def steps() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(1, TURNS + 1):
        call = {"name": "read_file", "arguments": {"path": f"f{n:02d}.txt"}}
        out += [{"tool_calls": [call]}, {"content": f"Read file {n}."}]
    return out


def size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


async def run(server: FakeOpenAIServer, prune: bool) -> tuple[int, int, int]:
    """(threads.sqlite bytes, -wal bytes, transcript bytes), sizes taken after the last
    turn with the session still open."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        (root / ".git").mkdir(parents=True)
        for n in range(1, TURNS + 1):
            line = f"file {n:02d} ".ljust(LINE - 1, "x") + "\n"
            (root / f"f{n:02d}.txt").write_text(line * (FILE_BYTES // LINE))
        os.environ.update(
            INVINCAT_HOME=str(Path(tmp) / "home"),
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="k",
            INVINCAT_MODEL="fake-model",
            # Keep every tool result whole: the worst case for storage.
            INVINCAT_MICRO_COMPACTION="false",
            INVINCAT_AUTO_COMPACTION="false",
            # The memory model would take steps of the script; it stores nothing here.
            INVINCAT_MEMORY_EXTRACTION="false",
        )
        server.reset()
        server.add_steps(steps())
        settings = load_settings()
        session = Session(settings, Workspace(root), auto_approve=True)
        if not prune:

            async def keep_everything(thread_id: str) -> None:
                return None

            session._compact_thread = keep_everything  # type: ignore[method-assign]
        async with session:
            thread = None
            for n in range(1, TURNS + 1):
                turn = await session.start_turn(f"read file {n}", thread)
                thread = turn.thread_id
                assert await turn.wait() == "completed"
                for task in turn.followups:
                    await task
            assert thread is not None
            transcript = len(json.dumps(await session.history(thread)).encode())
            db = settings.threads_db
            # While the session is open (closing it folds the WAL into the main file).
            sizes = size(db), size(db.with_name(db.name + "-wal"))
        return *sizes, transcript


async def main() -> None:
    with FakeOpenAIServer() as server:
        before = await run(server, prune=False)
        after = await run(server, prune=True)
    print(f"{TURNS} turns, each reading a different {FILE_BYTES // 1024} KB file")
    for label, (db, wal, transcript) in (("no pruning", before), ("pruning", after)):
        print(
            f"  {label:<11} threads.sqlite {db / 1e6:8.2f} MB  (-wal {wal / 1e6:6.2f} MB)  "
            f"transcript {transcript / 1e6:5.2f} MB  ratio {db / transcript:6.2f}x"
        )
    print("  target: ratio <= 3x with pruning")


if __name__ == "__main__":
    asyncio.run(main())
