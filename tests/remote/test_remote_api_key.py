"""A deployment's API key: read from the variable `api_key_env` names (user file only),
sent to that deployment alone as `x-api-key`, never printed, also when the server fails.
A project file's `api_key_env` sends nothing. The real `invincat` against a local HTTP
server that records what it gets."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.remote.conftest import configure_deployment
from tests.terminal.cli_process import run_invincat

SECRET = "lab-key-7f3a9c1e5b2d4f60a8c7e9b1d3f5a7c9"


class Recorder(ThreadingHTTPServer):
    status = 200
    seen: list[dict[str, str]]


class Handler(BaseHTTPRequestHandler):
    server: Recorder

    def do_POST(self) -> None:  # threads/search
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = b"[]" if self.server.status == 200 else b'{"detail": "boom"}'
        self.send_response(self.server.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    server = Recorder(("127.0.0.1", 0), Handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _url(server: Recorder) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_the_key_goes_to_its_deployment_only_and_is_never_printed(
    recorder: Recorder, invincat_env: dict[str, str], invincat_home: Path
) -> None:
    configure_deployment(invincat_home, _url(recorder), api_key_env="LAB_KEY")
    env = {**invincat_env, "LAB_KEY": SECRET, "LANGSMITH_API_KEY": "ls-not-for-them"}
    ok = run_invincat(["remote", "list", "--json"], env)
    assert ok.code == 0, ok.stderr
    assert json.loads(ok.stdout) == {"pending": [], "skipped": 0}
    assert recorder.seen[-1].get("x-api-key") == SECRET
    assert "ls-not-for-them" not in json.dumps(recorder.seen)

    recorder.status = 500
    failed = run_invincat(["remote", "list"], env)
    assert failed.code == 1 and "refused to list threads: HTTP 500" in failed.stderr
    for output in (ok.stdout, ok.stderr, failed.stdout, failed.stderr):
        assert SECRET not in output


def test_a_project_files_key_variable_sends_nothing(
    recorder: Recorder, invincat_env: dict[str, str], workspace: Path
) -> None:
    configure_deployment(workspace / ".invincat", _url(recorder), api_key_env="LAB_KEY")
    env = {**invincat_env, "LAB_KEY": SECRET}
    done = run_invincat(["remote", "list", "--cwd", str(workspace)], env)
    assert done.code == 0, done.stderr
    assert "api_key_env is ignored in a project file" in done.stderr
    assert recorder.seen and "x-api-key" not in recorder.seen[-1]
    assert SECRET not in done.stdout + done.stderr
