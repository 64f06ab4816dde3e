"""A client that sends `shutdown` and hangs up at once (Neovim on `:qa`) must not leave the
server running, even with a turn waiting for an approval."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE

INVINCAT = str(Path(sys.executable).with_name("invincat"))


def _send(stream: IO[bytes], message: dict[str, Any]) -> None:
    data = json.dumps(message).encode()
    stream.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def _until(stream_in: IO[bytes], stream_out: IO[bytes], done: Any) -> None:
    while True:
        message = _receive(stream_in)
        if done(message):
            return
        if "id" in message and "method" in message:  # a server request: answer it
            _send(stream_out, {"jsonrpc": "2.0", "id": message["id"], "result": None})


def test_shutdown_then_hang_up_with_a_pending_approval_exits(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    for _ in range(3):
        fake_openai.add_steps(
            [
                {
                    "tool_calls": [
                        {"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}
                    ]
                }
            ]
        )
        server = subprocess.Popen(
            [INVINCAT, "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workspace,
            env=invincat_env,
        )
        assert server.stdin is not None and server.stdout is not None
        try:
            root = workspace.as_uri()
            _send(
                server.stdin,
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"processId": None, "rootUri": root, "capabilities": {}},
                },
            )
            _until(server.stdout, server.stdin, lambda m: m.get("id") == 1)
            _send(server.stdin, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
            _send(
                server.stdin,
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "invincat/chat",
                    "params": {"prompt": "write a"},
                },
            )
            _until(
                server.stdout,
                server.stdin,
                lambda m: (
                    m.get("method") == "invincat/event"
                    and m["params"]["event"]["type"] == "approval_requested"
                ),
            )
            _send(server.stdin, {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None})
            server.stdin.close()
            server.stdout.close()
            assert server.wait(timeout=DEADLINE) is not None
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
