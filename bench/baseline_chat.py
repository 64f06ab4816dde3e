"""Baseline for bench_chat.py: the same six streamed model calls and five operations,
done directly with ChatOpenAI (no agent, no checkpoint, no approvals).

Usage: python bench/baseline_chat.py BASE_URL WORKSPACE  → prints {"in_model": seconds}
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI


def run_tool(ws: Path, name: str, args: dict[str, Any]) -> None:
    target = ws / str(args.get("path", "notes.md"))
    if name == "write_file":
        target.write_text(args["content"])
    elif name == "read_file":
        target.read_text()
    elif name == "edit_file":
        target.write_text(target.read_text().replace(args["old_string"], args["new_string"]))
    elif name == "grep":
        [line for line in target.read_text().splitlines() if args["pattern"] in line]
    elif name == "execute":
        subprocess.run(args["command"], shell=True, cwd=ws, capture_output=True, check=False)


async def main(base_url: str, ws: Path) -> None:
    model = ChatOpenAI(
        model="fake-model", base_url=base_url, api_key="k", streaming=True, stream_usage=True
    )
    in_model = 0.0
    for _ in range(6):
        start = time.perf_counter()
        message: Any = None
        async for chunk in model.astream([("user", "do the five things")]):
            message = chunk if message is None else message + chunk
        in_model += time.perf_counter() - start
        for call in message.tool_calls:
            run_tool(ws, call["name"], call["args"])
    print(json.dumps({"in_model": in_model}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
