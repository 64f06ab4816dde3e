"""Helpers for MCP and web_fetch tests: config writers, a streamable-HTTP MCP server
process, a loopback HTTP test site, and in-process sessions with front-end options."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.config import load_settings
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.session import Session

MCP_SERVER = Path(__file__).with_name("mcp_server.py")


def stdio_entry(marker: Path | None = None, name: str = "demo", **extra: Any) -> dict[str, Any]:
    """A config entry that runs the test MCP server over stdio."""
    args = [str(MCP_SERVER), "--name", name]
    if marker is not None:
        args += ["--marker", str(marker)]
    return {"command": sys.executable, "args": args, **extra}


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def tool_messages(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every tool message the model was sent, across all recorded requests (deduplicated)."""
    seen: dict[str, dict[str, Any]] = {}
    for request in requests:
        for message in request["messages"]:
            if message["role"] == "tool":
                seen[message["tool_call_id"]] = message
    return list(seen.values())


@pytest.fixture
def env(invincat_env: dict[str, str]) -> dict[str, str]:
    """`invincat_env` without the memory agent, whose extra model calls are noise here."""
    return {**invincat_env, "INVINCAT_MEMORY_EXTRACTION": "0"}


@dataclass
class HttpMcpServer:
    url: str
    marker: Path
    proc: subprocess.Popen[bytes]


@pytest.fixture
def http_mcp_server(tmp_path: Path) -> Iterator[HttpMcpServer]:
    """The test MCP server over streamable HTTP on a free loopback port."""
    port = free_port()
    marker = tmp_path / "http-marker"
    log = (tmp_path / "http-mcp.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(MCP_SERVER), "--name", "web", "--http", str(port), "--marker",
         str(marker)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise AssertionError("the HTTP MCP server did not start")
    try:
        yield HttpMcpServer(f"http://127.0.0.1:{port}/mcp", marker, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


Route = Callable[[BaseHTTPRequestHandler], None]


class Site:
    """A loopback HTTP server whose routes the test defines; records the paths it served."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.hits.append(self.path)
                route = site.routes.get(self.path.split("?")[0])
                if route is None:
                    self.send_error(404)
                else:
                    route(self)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def page(self, path: str, body: bytes | str, content_type: str = "text/html") -> None:
        data = body.encode() if isinstance(body, str) else body

        def route(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(200)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)

        self.routes[path] = route

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        def route(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(status)
            handler.send_header("Location", location)
            handler.send_header("Content-Length", "0")
            handler.end_headers()

        self.routes[path] = route

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site() -> Iterator[Site]:
    server = Site()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def other_site() -> Iterator[Site]:
    server = Site()
    try:
        yield server
    finally:
        server.close()


SessionFactory = Callable[..., Awaitable[Session]]


@pytest.fixture
async def open_session(
    invincat_monkeyenv: dict[str, str], workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[SessionFactory]:
    """`await open_session(auto_approve=..., options={...})` → an open in-process Session."""
    monkeypatch.setenv("INVINCAT_MEMORY_EXTRACTION", "0")
    opened: list[Session] = []

    async def make(auto_approve: bool = False, options: dict[str, Any] | None = None) -> Session:
        session = await Session(
            load_settings(), Workspace(workspace), auto_approve=auto_approve, options=options
        ).open()
        opened.append(session)
        return session

    yield make
    for session in opened:
        await session.close()


async def drive(session: Session, prompt: str, *, decide: dict[str, Any] | None = None) -> list:
    """Run one turn; answer every approval with `decide` (default approve). Returns events."""
    turn = await session.start_turn(prompt)
    events = []
    async for event in turn.events():
        events.append(event)
        if event.type == "approval_requested":
            await session.resolve(event.approval_id, decide or {"type": "approve"})
    assert events[-1].type == "turn_end"
    return events
