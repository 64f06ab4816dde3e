"""A real `langgraph dev` server running Invincat's worker agent (the repository's
langgraph.json) on a free loopback port, its model the scripted fake OpenAI server; both
live for the module. Nothing leaves the machine.

If the server cannot start here the tests are skipped with the reason and the server's
log, except under CI (`CI` set), where that is a failure."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import invincat_env_overrides
from tests.deadlines import DEADLINE

REPO = Path(__file__).resolve().parents[2]
GRAPH_ID = "invincat"


@dataclass
class RemoteServer:
    url: str
    workspace: Path
    """The server's workspace: where its tools write."""
    fake: FakeOpenAIServer
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_env(root: Path, fake: FakeOpenAIServer, workspace: Path) -> dict[str, str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith(("LANGSMITH_", "LANGCHAIN_"))
    }
    overrides, remove = invincat_env_overrides(
        root / "server-home", root / "server-user", fake.base_url, base
    )
    for name in remove:
        base.pop(name, None)
    base.update(overrides)
    base.update(
        INVINCAT_REMOTE_WORKSPACE=str(workspace),
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        # Anything that still tries to go out meets a closed local port.
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
    )
    return base


def _cannot_run(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"langgraph dev must run under CI: {reason}")
    pytest.skip(f"langgraph dev cannot run here: {reason}")


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            _cannot_run(f"it did not answer /ok:\n{log.read_text(errors='replace')[-4000:]}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def remote_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteServer]:
    cli = Path(sys.executable).with_name("langgraph")
    if not cli.exists():
        _cannot_run("langgraph-cli[inmem] is not installed (pip install -e '.[dev]')")
    root = tmp_path_factory.mktemp("remote")
    workspace = root / "server-workspace"
    (workspace / ".git").mkdir(parents=True)
    run_dir = root / "server-run"  # where the in-memory server keeps .langgraph_api/
    run_dir.mkdir()
    fake = FakeOpenAIServer().start_in_thread()
    port = _free_port()
    log = root / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                str(cli),
                "dev",
                "--config",
                str(REPO / "langgraph.json"),
                "--no-browser",
                "--no-reload",
                # Invincat's tools do their file I/O synchronously (docs/remote.md).
                "--allow-blocking",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            cwd=run_dir,
            env=_server_env(root, fake, workspace),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc, log)
        yield RemoteServer(url, workspace, fake, log)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        fake.stop_thread()


def configure_deployment(home: Path, url: str, name: str = "lab", **extra: object) -> None:
    """The client's `remote` entry in $INVINCAT_HOME/subagents.json."""
    home.mkdir(parents=True, exist_ok=True)
    entry = {"url": url, "graph_id": GRAPH_ID, "description": "the remote worker", **extra}
    (home / "subagents.json").write_text(json.dumps({"remote": {name: entry}}))
