"""Pytest fixtures for tests that talk to a model: load with
`pytest_plugins = ["invincat_server.testing.fixtures"]` (tests/conftest.py does).

- `fake_openai`: a running FakeOpenAIServer (thread mode), no steps yet.
- `invincat_home`: an empty temp `$INVINCAT_HOME`.
- `invincat_env`: an environment dict for subprocesses, wired to `fake_openai`.
- `invincat_monkeyenv`: the same variables applied to this process via monkeypatch.
- `workspace`: an empty temp project dir (has `.git`, so it is a project root).

Every environment points XDG_RUNTIME_DIR at one directory per test session, so one-shot
chats share a warm chat server of their own (docs/warm-server.md), never the developer's,
and the servers started there are stopped when the session ends.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from .fake_openai import FakeOpenAIServer

FAKE_API_KEY = "test-key"
FAKE_MODEL = "fake-model"

# Variables from the developer's shell that would override or leak into what the tests
# set up: LangChain prefers OPENAI_API_BASE over OPENAI_BASE_URL, and any INVINCAT_* knob
# (memory model, timeouts, retries) would make results depend on who runs the suite.
_DROPPED_PREFIXES = ("INVINCAT_",)
_DROPPED_NAMES = frozenset(
    {"OPENAI_API_BASE", "OPENAI_PROXY", "OPENAI_ORG_ID", "OPENAI_ORGANIZATION", "OPENAI_PROJECT"}
)
_LOCAL_HOSTS = "127.0.0.1,localhost,::1"


def _with_no_proxy(value: str | None) -> str:
    """NO_PROXY extended with loopback, so a proxy in the environment never sees our calls."""
    return f"{value},{_LOCAL_HOSTS}" if value else _LOCAL_HOSTS


def invincat_env_overrides(
    home: Path,
    user_home: Path,
    base_url: str,
    base_env: Mapping[str, str],
    runtime_dir: Path | None = None,
) -> tuple[dict[str, str], list[str]]:
    """(variables to set, variables to remove) for a hermetic invincat run; `runtime_dir`:
    the XDG_RUNTIME_DIR, where warm chat servers put their sockets and logs."""
    remove = [
        name for name in base_env if name in _DROPPED_NAMES or name.startswith(_DROPPED_PREFIXES)
    ]
    overrides = {
        "INVINCAT_HOME": str(home),
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": FAKE_API_KEY,
        "INVINCAT_MODEL": FAKE_MODEL,
        # The memory agent would send its own requests to the scripted server after every
        # turn; tests that exercise it turn it back on.
        "INVINCAT_MEMORY_EXTRACTION": "off",
        "HOME": str(user_home),
        # Windows looks here for the home dir; harmless elsewhere.
        "USERPROFILE": str(user_home),
        "NO_PROXY": _with_no_proxy(base_env.get("NO_PROXY")),
        "no_proxy": _with_no_proxy(base_env.get("no_proxy")),
    }
    if runtime_dir is not None:
        overrides["XDG_RUNTIME_DIR"] = str(runtime_dir)
    return overrides, [name for name in remove if name not in overrides]


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started fake OpenAI server with an empty script; call `.add_steps([...])`."""
    server = FakeOpenAIServer().start_in_thread()
    try:
        yield server
    finally:
        server.stop_thread()


def warm_servers(runtime_dir: Path) -> dict[Path, int]:
    """Socket → pid of every warm server that logged serving under the XDG_RUNTIME_DIR
    `runtime_dir` (docs/warm-server.md: the logs sit beside the sockets)."""
    found: dict[Path, int] = {}
    for log in (runtime_dir / "invincat").glob("chat-*.log"):
        for match in re.finditer(r"serving (\S+) \(version \w+, pid (\d+)\)", log.read_text()):
            found[Path(match.group(1))] = int(match.group(2))
    return found


def warm_workers(runtime_dir: Path) -> list[int]:
    """The pids of the workers the warm servers under `runtime_dir` started."""
    return [
        int(pid)
        for log in sorted((runtime_dir / "invincat").glob("chat-*.log"))
        for pid in re.findall(r"worker (\d+) started", log.read_text())
    ]


def warm_log(runtime_dir: Path, sock: Path) -> str:
    """The log of the server that served `sock`."""
    [text] = [
        log.read_text()
        for log in (runtime_dir / "invincat").glob("chat-*.log")
        if str(sock) in log.read_text()
    ]
    return text


def stop_warm_servers(runtime_dir: Path) -> None:
    """SIGTERM every warm server that logged serving under `runtime_dir` and still runs."""
    for pid in warm_servers(runtime_dir).values():
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


@contextlib.contextmanager
def private_runtime_dir() -> Iterator[Path]:
    """A new XDG_RUNTIME_DIR (mode 0700, as the warm server requires) directly under the
    temp directory (a socket's path must fit in 107 bytes; pytest's tmp_path may not); its
    servers are stopped and it is removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="invincat-xdg-"))
    try:
        yield directory
    finally:
        stop_warm_servers(directory)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def warm_runtime_dir() -> Iterator[Path]:
    """The test session's XDG_RUNTIME_DIR."""
    with private_runtime_dir() as directory:
        yield directory


@pytest.fixture
def invincat_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def _user_home(tmp_path: Path) -> Path:
    # Separate from INVINCAT_HOME so code that falls back to ~/.invincat is caught.
    user_home = tmp_path / "user_home"
    user_home.mkdir()
    return user_home


@pytest.fixture
def invincat_env(
    invincat_home: Path, _user_home: Path, fake_openai: FakeOpenAIServer, warm_runtime_dir: Path
) -> dict[str, str]:
    """A copy of os.environ pointing invincat at `fake_openai` and temp homes (subprocesses)."""
    env = dict(os.environ)
    overrides, remove = invincat_env_overrides(
        invincat_home, _user_home, fake_openai.base_url, env, warm_runtime_dir
    )
    for name in remove:
        env.pop(name, None)
    env.update(overrides)
    return env


@pytest.fixture
def invincat_monkeyenv(
    invincat_home: Path,
    _user_home: Path,
    fake_openai: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    warm_runtime_dir: Path,
) -> dict[str, str]:
    """Like `invincat_env`, applied to this process; returns the variables set."""
    overrides, remove = invincat_env_overrides(
        invincat_home, _user_home, fake_openai.base_url, os.environ, warm_runtime_dir
    )
    for name in remove:
        monkeypatch.delenv(name, raising=False)
    for name, value in overrides.items():
        monkeypatch.setenv(name, value)
    return overrides


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty project directory; `.git` makes it the project root for invincat."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    return project
