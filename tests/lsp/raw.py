"""A raw JSON-RPC peer over a socket or pipes: what an attacker (or a broken client) sends,
byte for byte, without pytest-lsp's help."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import IO, Any

from tests.lsp.client import file_uri

DEADLINE = 60.0


def initialize(msg_id: int, workspace: Path, options: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "processId": None,
        "rootUri": file_uri(workspace),
        "capabilities": {},
    }
    if options is not None:
        params["initializationOptions"] = options
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


def initialized() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "initialized", "params": {}}


def request(msg_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


class Peer:
    """Frames in, frames out over a byte stream (a socket's or a process' pipes)."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader = reader
        self._writer = writer

    @classmethod
    def connect(cls, address: str | tuple[str, int]) -> tuple[Peer, socket.socket]:
        family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(DEADLINE)
        sock.connect(address)
        stream = sock.makefile("rwb")
        return cls(stream, stream), sock

    def send(self, message: Any) -> None:
        self.send_body(json.dumps(message).encode())

    def send_body(self, body: bytes) -> None:
        """A frame around any bytes, JSON or not."""
        self._writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self._writer.flush()

    def receive(self) -> dict[str, Any] | None:
        """The next message; None when the stream ended (closed or reset: a server that
        closes a connection before reading what was sent makes the kernel reset it)."""
        length = 0
        while True:
            try:
                line = self._reader.readline()
            except ConnectionResetError:
                return None
            if not line:
                return None
            if line == b"\r\n":
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self._reader.read(length))

    def answer(self, msg_id: Any) -> dict[str, Any]:
        """The response to `msg_id`, answering the server's own requests meanwhile and
        skipping notifications."""
        while True:
            message = self.receive()
            assert message is not None, f"the stream ended before the answer to {msg_id!r}"
            if "method" not in message and message.get("id") == msg_id:
                return message
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    def event(self, kind: str) -> dict[str, Any]:
        """The next `invincat/event` of type `kind` (its `event` object)."""
        while True:
            message = self.receive()
            assert message is not None, f"the stream ended before a {kind} event"
            if message.get("method") == "invincat/event":
                if message["params"]["event"]["type"] == kind:
                    return message["params"]["event"]
            elif "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
