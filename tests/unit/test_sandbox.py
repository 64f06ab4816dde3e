"""The shell sandbox's parts: which setting wins (user, environment, project, trust),
that every bad project item costs only itself, the bwrap command line, and that a
sandboxed command is killed, timed out and cancelled like an unconfined one."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import subprocess
import sys
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
from invincat_server.runtime.sandbox import landlock as ll
from invincat_server.runtime.sandbox.bwrap import bwrap_argv, find_bwrap, probe_bwrap
from invincat_server.runtime.sandbox.gate import private_tmp_prefix, remove_stale_tmp_dirs
from invincat_server.runtime.sandbox.landlock import abi_version
from invincat_server.runtime.sandbox.landlock_policy import LandlockSpec, build_ruleset
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


# The Landlock fallback: the ruleset for a mode, and the launcher's bad specs ----------

needs_landlock = pytest.mark.skipif(abi_version() < 1, reason="no Landlock in this kernel")


def _landlock_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace with .git, a folder, a file and a link out; Invincat's home beside it."""
    root, home, outside = tmp_path / "ws", tmp_path / "ih", tmp_path / "outside"
    for folder in (root / ".git", root / "src", home, outside):
        folder.mkdir(parents=True)
    (root / "README").write_text("r\n")
    (root / "out").symlink_to(outside)
    return root, home, outside


def _rules(spec: LandlockSpec, abi: int = 7) -> dict[str, int]:
    """Each path's rights, all its rules together (a path may have a read and a write rule)."""
    rights: dict[str, int] = {}
    for path, allowed in build_ruleset(spec, abi).paths:
        rights[path] = rights.get(path, 0) | allowed
    return rights


def test_landlock_rights_follow_the_abi() -> None:
    assert not ll.rights_for(1).fs & (ll.REFER | ll.TRUNCATE) and not ll.rights_for(1).net
    assert ll.rights_for(2).fs & ll.REFER and not ll.rights_for(2).fs & ll.TRUNCATE
    assert ll.rights_for(3).fs & ll.TRUNCATE and not ll.rights_for(3).net
    assert ll.rights_for(4).net == ll.BIND_TCP | ll.CONNECT_TCP
    assert not ll.rights_for(4).fs & ll.IOCTL_DEV and ll.rights_for(5).fs & ll.IOCTL_DEV
    assert not ll.rights_for(5).scoped and ll.rights_for(6).scoped == ll.rights_for(7).scoped != 0


def test_landlock_workspace_write_skips_git_the_home_and_links(tmp_path: Path) -> None:
    root, home, outside = _landlock_tree(tmp_path)
    spec = LandlockSpec.of(SandboxSpec(), root, home, tmp_path / "t")
    rules = _rules(spec)
    write = ll.WRITE_FILE | ll.MAKE_REG | ll.REMOVE_FILE
    assert rules[str(root / "src")] & write == write and rules[str(root / "README")] & write
    # A right on the workspace itself would hold beneath .git too: it only gets reads.
    assert rules[str(root)] & ll.MAKE_REG == 0 and str(root / ".git") not in rules
    assert str(root / "out") not in rules and str(outside) in rules  # the target: read only
    assert not rules[str(outside)] & ll.WRITE_FILE
    # Reads: every sibling on the way down to the home, never the home or a folder above it.
    assert str(home) not in rules and str(tmp_path) not in rules and "/" not in rules
    assert rules["/usr"] & ll.READ_FILE and rules[str(tmp_path / "t")] & write
    ruleset = build_ruleset(spec, 7)
    assert ruleset.handled_net == ll.BIND_TCP | ll.CONNECT_TCP and ruleset.scoped


def test_landlock_without_protected_entries_the_workspace_is_writable_whole(
    tmp_path: Path,
) -> None:
    root, home = tmp_path / "ws", tmp_path / "ih"
    root.mkdir(), home.mkdir()
    rules = _rules(LandlockSpec.of(SandboxSpec(), root, home, tmp_path / "t"))
    assert rules[str(root)] & ll.MAKE_REG


def test_landlock_read_only_and_network_and_old_abis(tmp_path: Path) -> None:
    root, home, _ = _landlock_tree(tmp_path)
    tmp = tmp_path / "t"
    spec = LandlockSpec.of(SandboxSpec(mode="read-only"), root, home, tmp)
    written = [p for p, r in _rules(spec).items() if r & ll.MAKE_REG]
    assert written == [str(tmp)]
    assert (
        build_ruleset(LandlockSpec.of(SandboxSpec(network=True), root, home, tmp), 7).handled_net
        == 0
    )
    old = build_ruleset(spec, 1)
    assert old.handled_net == 0 and old.scoped == 0
    assert all(not rights & ~ll.rights_for(1).fs for _, rights in old.paths)


def test_landlock_home_inside_the_workspace_and_workspace_inside_the_home(tmp_path: Path) -> None:
    root, _, _ = _landlock_tree(tmp_path)
    home = root / "cfg" / "invincat"
    home.mkdir(parents=True)
    (root / "cfg" / "other").mkdir()
    rules = _rules(LandlockSpec.of(SandboxSpec(), root, home, tmp_path / "t"))
    assert str(home) not in rules and str(root / "cfg") not in rules
    assert rules[str(root / "cfg" / "other")] & ll.MAKE_REG and rules[str(root / "src")]
    # A project inside the home: readable, never writable.
    project = home / "project"
    project.mkdir()
    rules = _rules(LandlockSpec.of(SandboxSpec(), project, home, tmp_path / "t"))
    assert rules[str(project)] == ll.READ_FILE | ll.READ_DIR | ll.EXECUTE
    assert not [p for p in rules if p.startswith(str(home)) and p != str(project)]


def _launch(spec: str, marker: Path) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-I", "-m", "invincat_server.runtime.sandbox.landlock_exec", spec]
    return subprocess.run(
        [*argv, "--", "/bin/sh", "-c", f"touch {marker}"], capture_output=True, timeout=60
    )


@pytest.mark.parametrize(
    "bad",
    [
        "[]",
        "{not json",
        '{"mode": "read-only", "network": "no", "root": "/", "home": "/h", "tmp": "/t"}',
        '{"mode": "read-only", "network": false, "root": "/", "home": "/h"}',
        '{"mode": "read-only", "network": false, "root": "/\\u0000", "home": "/h", "tmp": "/t"}',
        '{"mode": "read-only", "network": false, "root": "", "home": "/h", "tmp": "/t"}',
        '{"mode": "read-only", "network": false, "root": "/", "home": "/h", "tmp": "/t", "x": '
        + "[" * 50_000
        + "]" * 50_000
        + "}",
    ],
)
def test_the_landlock_launcher_never_runs_the_command_with_a_bad_spec(
    tmp_path: Path, bad: str
) -> None:
    marker = tmp_path / "ran"
    done = _launch(bad, marker)
    assert done.returncode == 126 and b"did not run" in done.stderr, done.stderr[-300:]
    assert not marker.exists() and done.stdout == b""


@needs_landlock
def test_the_landlock_launcher_confines_a_link_out_of_the_workspace(tmp_path: Path) -> None:
    root, home, outside = _landlock_tree(tmp_path)
    tmp = tmp_path / "t"
    tmp.mkdir()
    spec = json.dumps(dataclasses.asdict(LandlockSpec.of(SandboxSpec(), root, home, tmp)))
    done = _launch(spec, root / "out" / "planted")
    assert done.returncode != 0 and not (outside / "planted").exists(), done.stderr
    assert _launch(spec, root / "src" / "made").returncode == 0
    assert (root / "src" / "made").exists()


def _landlock_execute(root: Path, home: Path) -> Any:
    sandbox = ExecuteSandbox(
        SandboxSpec(),
        root=root,
        home=home,
        bwrap=None,
        unavailable="bwrap not found",
        env={},
        landlock_abi=abi_version(),
    )
    assert sandbox.active and "via Landlock" in sandbox.describe({"command": "true"})
    return {t.name: t for t in build_core_tools(Workspace(root), sandbox=sandbox)}["execute"]


@needs_landlock
async def test_landlock_commands_are_killed_timed_out_and_confined(dirs: tuple[Path, Path]) -> None:
    # The launcher execs the shell, so the group shell.py leads and kills is the command's.
    home, root = dirs
    execute = _landlock_execute(root, home)
    message = await _run(execute, command="pwd; echo x > made; echo $TMPDIR; touch /var/tmp/z")
    assert str(message.content).startswith(f"{os.path.realpath(root)}\n"), message.content
    assert (root / "made").exists() and "invincat-sandbox-" in str(message.content)
    assert "Permission denied" in str(message.content)
    marker = _marker()
    message = await _run(
        execute, command=f"sleep {marker} & echo started; sleep {marker}", timeout=2
    )
    assert message.status == "error" and "timed out after 2s" in message.content
    assert eventually(lambda: not process_running(f"sleep {marker}"))
