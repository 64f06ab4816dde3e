"""The shell sandbox's parts: which setting wins (user, environment, project, trust),
that every bad project item costs only itself, the bwrap command line, and that a
sandboxed command is killed, timed out and cancelled like an unconfined one."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from invincat_server.runtime.config import ConfigError, load_settings
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.sandbox import ExecuteSandbox, SandboxSpec
from invincat_server.runtime.sandbox.bwrap import bwrap_argv, find_bwrap, probe_bwrap
from invincat_server.runtime.sandbox.gate import private_tmp_prefix, remove_stale_tmp_dirs
from invincat_server.runtime.sandbox.project import resolve_spec
from invincat_server.runtime.tools import build_core_tools, shell
from tests.deadlines import eventually
from tests.terminal.cli_process import process_running

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap missing")


def _spec(home: Path, root: Path, project_toml: str | None = None, **env: str) -> tuple:
    notices: list[str] = []
    if project_toml is not None:
        (root / ".invincat").mkdir(exist_ok=True)
        (root / ".invincat" / "config.toml").write_text(project_toml)
    settings = load_settings({"INVINCAT_HOME": str(home), **env})
    spec = resolve_spec(settings, root, trust_project=False, notify=notices.append)
    return spec, notices


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, root = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    root.mkdir()
    return home, root


def test_default_is_workspace_write_without_network(dirs: tuple[Path, Path]) -> None:
    assert _spec(*dirs) == (SandboxSpec("workspace-write", False), [])


def test_environment_wins_over_the_user_file(dirs: tuple[Path, Path]) -> None:
    home, root = dirs
    (home / "config.toml").write_text('[sandbox]\nmode = "off"\nnetwork = true\n')
    assert _spec(home, root)[0] == SandboxSpec("off", True)
    spec, _ = _spec(home, root, INVINCAT_SANDBOX="read-only", INVINCAT_SANDBOX_NETWORK="0")
    assert spec == SandboxSpec("read-only", False)


@pytest.mark.parametrize(
    ("toml", "env"),
    [
        ('[sandbox]\nmode = "everything"\n', {}),
        ("[sandbox]\nmode = 3\n", {}),
        ('[sandbox]\nnetwork = "yes"\n', {}),
        ('sandbox = "off"\n', {}),
        ("", {"INVINCAT_SANDBOX": "none"}),
        ("", {"INVINCAT_SANDBOX": "off\x00"}),
    ],
)
def test_a_bad_user_setting_is_a_clear_error(
    dirs: tuple[Path, Path], toml: str, env: dict[str, str]
) -> None:
    home, root = dirs
    (home / "config.toml").write_text(toml)
    with pytest.raises(ConfigError, match=r"sandbox|SANDBOX"):
        _spec(home, root, **env)


def test_a_project_may_narrow(dirs: tuple[Path, Path]) -> None:
    home, root = dirs
    (home / "config.toml").write_text("[sandbox]\nnetwork = true\n")
    spec, notices = _spec(home, root, '[sandbox]\nmode = "read-only"\nnetwork = false\n')
    assert spec == SandboxSpec("read-only", False) and notices == []


def test_a_project_that_widens_is_ignored_untrusted_but_its_narrowing_holds(
    dirs: tuple[Path, Path],
) -> None:
    home, root = dirs
    (home / "config.toml").write_text('[sandbox]\nmode = "read-only"\n')
    spec, notices = _spec(home, root, '[sandbox]\nmode = "workspace-write"\nnetwork = true\n')
    assert spec == SandboxSpec("read-only", False)
    [notice] = notices
    assert "mode = 'workspace-write'" in notice and "network = true" in notice


def test_trusting_the_project_file_lets_it_widen_until_it_changes(dirs: tuple[Path, Path]) -> None:
    home, root = dirs
    (root / ".invincat").mkdir()
    config = root / ".invincat" / "config.toml"
    config.write_text('[sandbox]\nmode = "off"\n')
    settings = load_settings({"INVINCAT_HOME": str(home)})
    told: list[str] = []
    assert resolve_spec(settings, root, trust_project=True, notify=told.append).mode == "off"
    assert resolve_spec(settings, root, trust_project=False, notify=told.append).mode == "off"
    assert told == []
    config.write_text('[sandbox]\nmode = "off"\nnetwork = true\n')
    spec = resolve_spec(settings, root, trust_project=False, notify=told.append)
    assert spec == SandboxSpec("workspace-write", False) and len(told) == 1


@pytest.mark.parametrize(
    "toml",
    [
        '[sandbox]\nmode = "off\\u0000"\n',  # NUL byte
        "[sandbox]\nmode = 3\n",  # wrong type
        "[sandbox]\nmode = { a = 1 }\n",
        "[sandbox]\nnetwork = 1\n",
        '[sandbox]\nmode = "' + "x" * 100_000 + '"\n',  # huge value
        'sandbox = "off"\n',  # not a table
        "[sandbox\n",  # not TOML
        "# " + "x" * 1_100_000 + "\n",  # huge file
    ],
)
def test_a_bad_project_item_is_ignored_and_told(dirs: tuple[Path, Path], toml: str) -> None:
    spec, notices = _spec(*dirs, toml)
    assert spec == SandboxSpec("workspace-write", False)
    assert len(notices) == 1 and len(notices[0]) < 500


def test_one_bad_project_item_costs_only_itself(dirs: tuple[Path, Path]) -> None:
    spec, notices = _spec(*dirs, "[sandbox]\nmode = 3\nnetwork = false\n")
    assert spec == SandboxSpec("workspace-write", False) and len(notices) == 1
    spec, _ = _spec(*dirs, '[sandbox]\nmode = "read-only"\nnetwork = "on"\n')
    assert spec.mode == "read-only"


def test_a_project_config_that_is_a_symlink_to_a_device_is_not_read(
    dirs: tuple[Path, Path],
) -> None:
    home, root = dirs
    (root / ".invincat").mkdir()
    (root / ".invincat" / "config.toml").symlink_to("/dev/zero")
    assert _spec(home, root) == (SandboxSpec("workspace-write", False), [])


def test_missing_bwrap_is_not_found(tmp_path: Path) -> None:
    assert find_bwrap({"INVINCAT_BWRAP": str(tmp_path / "nothing")}) is None
    assert find_bwrap({"PATH": str(tmp_path)}) is None


def test_a_bwrap_that_fails_is_reported_with_its_reason(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    reason = probe_bwrap(str(fake))
    assert reason is not None and "No permissions to create namespace" in reason


def test_home_inside_the_workspace_is_hidden_after_the_workspace_is_bound(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    (root / ".invincat").mkdir(parents=True)
    (root / ".git").mkdir()
    argv = bwrap_argv("bwrap", SandboxSpec(), root, root / ".invincat", tmp_path / "t", {})
    text = " ".join(argv)
    assert f"--bind {root} {root}" in text
    assert f"--ro-bind-try {root / '.git'} {root / '.git'}" in text
    assert argv.index("--tmpfs") > argv.index(str(root / ".git"))
    assert argv[argv.index("--tmpfs") + 1] == str(root / ".invincat")
    assert "--cap-drop" in argv and "--die-with-parent" in argv and "--share-net" not in argv


def test_a_workspace_inside_invincat_home_is_read_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / "skills" / "x"
    root.mkdir(parents=True)
    argv = bwrap_argv("bwrap", SandboxSpec(), root, home, tmp_path / "t", {})
    text = " ".join(argv)
    assert f"--tmpfs {home}" in text and f"--ro-bind {root} {root}" in text
    assert f"--bind {root}" not in text


# Kill, timeout and cancel, through the real tool with a real bwrap -------------------


def _sandboxed_execute(root: Path, home: Path, **options: Any) -> Any:
    bwrap = shutil.which("bwrap")
    sandbox = ExecuteSandbox(
        SandboxSpec(), root=root, home=home, bwrap=bwrap, unavailable=None, env={}
    )
    tools = {t.name: t for t in build_core_tools(Workspace(root), sandbox=sandbox, **options)}
    return tools["execute"]


async def _run(tool: Any, **args: Any) -> ToolMessage:
    message = await tool.ainvoke({"type": "tool_call", "id": "1", "name": tool.name, "args": args})
    assert isinstance(message, ToolMessage) and isinstance(message.content, str)
    return message


def _marker() -> str:
    """A sleep length no other process uses, to find ours in /proc."""
    return f"{3000 + uuid.uuid4().int % 100000}"


@needs_bwrap
async def test_sandboxed_output_exit_code_and_workspace(dirs: tuple[Path, Path]) -> None:
    home, root = dirs
    execute = _sandboxed_execute(root, home)
    message = await _run(execute, command="pwd; echo err >&2; cat; exit 3")
    assert message.content == f"{os.path.realpath(root)}\nerr\n[exit code: 3]"


@needs_bwrap
async def test_sandboxed_background_child_is_killed(dirs: tuple[Path, Path]) -> None:
    home, root = dirs
    marker = _marker()
    started = time.monotonic()
    message = await _run(_sandboxed_execute(root, home), command=f"sleep {marker} & echo ok")
    assert time.monotonic() - started < 60
    assert message.content == "ok\n[exit code: 0]"
    assert eventually(lambda: not process_running(f"sleep {marker}"))


@needs_bwrap
async def test_sandboxed_setsid_child_dies_with_the_sandbox(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Unconfined, `setsid` escapes the group kill; in the sandbox's pid namespace it dies
    # with the namespace.
    monkeypatch.setattr(shell, "DRAIN_TIMEOUT", 0.2)
    home, root = dirs
    marker = _marker()
    await _run(_sandboxed_execute(root, home), command=f"setsid sleep {marker} & echo ok")
    assert eventually(lambda: not process_running(f"sleep {marker}"))


@needs_bwrap
async def test_sandboxed_timeout_kills_the_command(dirs: tuple[Path, Path]) -> None:
    home, root = dirs
    marker = _marker()
    message = await _run(
        _sandboxed_execute(root, home),
        command=f"sleep {marker} & echo started; sleep {marker}",
        timeout=2,
    )
    assert message.status == "error" and "timed out after 2s" in message.content
    assert "started" in message.content
    assert eventually(lambda: not process_running(f"sleep {marker}"))


@needs_bwrap
async def test_cancelling_a_sandboxed_call_kills_it(dirs: tuple[Path, Path]) -> None:
    home, root = dirs
    marker = _marker()
    task = asyncio.create_task(
        _run(_sandboxed_execute(root, home), command=f"sleep {marker} & touch started; wait")
    )
    assert await asyncio.to_thread(eventually, lambda: (root / "started").exists())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert eventually(lambda: not process_running(f"sleep {marker}"))


@needs_bwrap
async def test_tmp_is_private_and_gone_after_the_command(dirs: tuple[Path, Path]) -> None:
    home, root = dirs
    host_file = Path("/tmp") / f"invincat-host-{uuid.uuid4().hex}"
    host_file.write_text("host\n")
    try:
        message = await _run(
            _sandboxed_execute(root, home),
            command=f"echo x > /tmp/left && cat /tmp/left && ls /tmp/{host_file.name}",
        )
    finally:
        host_file.unlink()
    assert message.content.startswith("x\n") and "No such file" in message.content
    assert list(Path(tempfile.gettempdir()).glob(f"{private_tmp_prefix()}*")) == []


def test_private_tmp_dirs_of_dead_processes_are_removed_others_kept() -> None:
    base = Path(tempfile.gettempdir())
    child = subprocess.Popen(["true"])
    child.wait()
    stale = Path(tempfile.mkdtemp(prefix=f"invincat-sandbox-{child.pid}-", dir=base))
    (stale / "left").write_text("x")
    mine = Path(tempfile.mkdtemp(prefix=private_tmp_prefix(), dir=base))
    try:
        remove_stale_tmp_dirs()
        assert not stale.exists() and mine.exists()
    finally:
        shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(mine, ignore_errors=True)
