"""Messages that are not valid JSON-RPC get `-32600` / `-32700` saying what is wrong, never
a Python traceback, and the server keeps serving (issue 13 §7). Raw bytes on the real
`invincat --stdio`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.raw import Peer, initialize, initialized, request

INVINCAT = str(Path(sys.executable).with_name("invincat"))


@pytest.fixture
def stdio(invincat_env: dict[str, str], workspace: Path) -> Iterator[Peer]:
    server = subprocess.Popen(
        [INVINCAT, "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=workspace,
        env=invincat_env,
    )
    assert server.stdin is not None and server.stdout is not None
    peer = Peer(server.stdout, server.stdin)
    try:
        peer.send(initialize(1, workspace))
        peer.answer(1)
        peer.send(initialized())
        yield peer
    finally:
        server.kill()
        server.wait()


def next_error(peer: Peer, seen: list[dict[str, Any]]) -> dict[str, Any]:
    """The next answer carrying an error; every message read is kept in `seen`."""
    while True:
        message = peer.receive()
        assert message is not None, "the server closed the stream"
        seen.append(message)
        if "error" in message:
            return message


INVALID_IDS = [{"a": 1}, [1], 1.5, True, None]


def test_invalid_ids_and_envelopes_get_invalid_request_without_a_traceback(
    stdio: Peer,
) -> None:
    seen: list[dict[str, Any]] = []
    for bad_id in INVALID_IDS:
        for method in ("invincat/threads/list", "shutdown", "textDocument/codeAction"):
            stdio.send(request(bad_id, method, {}))
            answer = next_error(stdio, seen)
            assert answer["id"] is None  # JSON-RPC: the id could not be determined
            assert answer["error"]["code"] == -32600, answer
            assert "must be an integer or a string" in answer["error"]["message"]

    stdio.send({"jsonrpc": "2.0", "id": 7, "method": 5})
    answer = next_error(stdio, seen)
    assert answer["id"] == 7 and answer["error"]["code"] == -32600
    assert "`method` must be a string, got a number" in answer["error"]["message"]

    stdio.send({"jsonrpc": "1.0", "id": 8, "method": "invincat/threads/list"})
    assert next_error(stdio, seen)["error"]["code"] == -32600

    for not_an_object in ([request(9, "invincat/threads/list", {})], "hello", 42):
        stdio.send(not_an_object)
        answer = next_error(stdio, seen)
        assert answer["id"] is None and answer["error"]["code"] == -32600

    # Not JSON at all: -32700.
    stdio.send_body(b'{"jsonrpc": "2.0", "id": 10, ')
    answer = next_error(stdio, seen)
    assert answer["id"] is None and answer["error"]["code"] == -32700

    # Nothing the server sent about any of it carries a traceback or a Python frame.
    dumped = json.dumps(seen)
    assert "traceback" not in dumped.lower() and 'File \\"' not in dumped
    assert "Error in server" not in dumped  # no window/showMessage blaming the server

    # And it still serves.
    stdio.send(request(11, "invincat/threads/list", {}))
    assert stdio.answer(11)["result"]["threads"] == []
