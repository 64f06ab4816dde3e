"""Stdout carries protocol only, even with debug logging, and EOF ends the process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.acp.client import DEADLINE, INVINCAT


async def test_every_stdout_line_is_a_json_rpc_message_and_eof_exits(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    env = {**invincat_env, "INVINCAT_LOG_LEVEL": "DEBUG"}
    process = await asyncio.create_subprocess_exec(
        INVINCAT,
        "--acp",
        env=env,
        cwd=workspace,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin and process.stdout and process.stderr
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(workspace), "mcpServers": []},
        },
    ]
    for request in requests:
        process.stdin.write(json.dumps(request).encode() + b"\n")
    await process.stdin.drain()

    answered: dict[int, dict] = {}
    lines: list[bytes] = []
    while len(answered) < 2:
        line = await asyncio.wait_for(process.stdout.readline(), DEADLINE)
        assert line, "the agent closed stdout early"
        lines.append(line)
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        if message.get("id") in (1, 2):
            answered[message["id"]] = message
    assert answered[1]["result"]["protocolVersion"] == 1
    assert answered[2]["result"]["sessionId"].startswith("t_")

    process.stdin.close()
    rest, stderr = await asyncio.wait_for(process.communicate(), DEADLINE)
    for line in rest.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert process.returncode == 0, stderr.decode()
