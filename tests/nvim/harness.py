"""Running headless Neovim with the plugin: a minimal init.lua, temp XDG dirs, and a
process group that is killed whatever happens, so no test can hang or leak a server."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.deadlines import DEADLINE

NVIM = Path(sys.executable).with_name("nvim")
# A whole headless Neovim run: several waits of up to DEADLINE each (T.wait, T.await).
NVIM_RUN = 4 * DEADLINE
INVINCAT = Path(sys.executable).with_name("invincat")
HERE = Path(__file__).parent
PLUGIN = HERE.parents[1] / "editors" / "nvim"

RunNvim = Callable[..., dict[str, Any]]


def _lua_string(value: str) -> str:
    # A JSON string without \u escapes is a valid Lua string literal.
    return json.dumps(value, ensure_ascii=False)


def write_init(path: Path, cmd: list[str]) -> Path:
    """A minimal init.lua: the plugin and the test helpers on the runtimepath, setup()."""
    cmd_lua = "{" + ", ".join(_lua_string(part) for part in cmd) + "}"
    path.write_text(
        f"vim.opt.runtimepath:prepend({_lua_string(str(PLUGIN))})\n"
        f"vim.opt.runtimepath:prepend({_lua_string(str(HERE))})\n"
        "vim.o.swapfile = false\n"
        "vim.o.columns = 160\n"
        "vim.o.lines = 48\n"
        f"require('invincat').setup({{ cmd = {cmd_lua} }})\n"
    )
    return path


def nvim_env(base: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """`base` with every XDG directory (config, data, state, cache) in a temp dir."""
    env = dict(base)
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        directory = tmp_path / "xdg" / name.lower()
        directory.mkdir(parents=True, exist_ok=True)
        env[f"XDG_{name}_HOME"] = str(directory)
    env.pop("NVIM", None)  # not a child of another Neovim
    env.pop("NVIM_LISTEN_ADDRESS", None)
    env.pop("VIMINIT", None)
    return env


def run_nvim(
    *,
    env: dict[str, str],
    cwd: Path,
    tmp_path: Path,
    commands: list[str],
    cmd: list[str] | None = None,
    timeout: float = NVIM_RUN,
) -> subprocess.CompletedProcess[str]:
    """Run headless Neovim with `-c` commands; its whole process group is killed on timeout."""
    if not NVIM.exists():
        pytest.fail(f"{NVIM} is missing: install the dev extras (pip install -e '.[dev]').")
    init = write_init(tmp_path / "init.lua", cmd or [str(INVINCAT), "--stdio"])
    args = [str(NVIM), "--headless", "--clean", "-i", "NONE", "-u", str(init)]
    for command in commands:
        args += ["-c", command]
    proc = subprocess.Popen(
        args,
        cwd=cwd,
        env=nvim_env(env, tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # Neovim's own process group, killed whatever happens
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        reap_servers(cwd.resolve(), grace=0)
        pytest.fail(f"Neovim did not finish within {timeout}s.\nstderr:\n{stderr[-4000:]}")
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    # A server still running after Neovim quit is a bug (it would pile up on a user's
    # machine too): fail, after killing it.
    left = reap_servers(cwd.resolve())
    if left:
        pytest.fail(f"invincat --stdio outlived Neovim (pids {left}, killed).\n{stderr[-2000:]}")
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)


def servers_in(directory: Path) -> list[int]:
    """Pids of `invincat --stdio` processes working in `directory` (Linux /proc)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(proc / "cwd")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if b"--stdio" in cmdline and any(part.endswith(b"invincat") for part in cmdline):
            if Path(cwd) == directory:
                pids.append(int(proc.name))
    return pids


def reap_servers(directory: Path, grace: float = 5) -> list[int]:
    """Wait up to `grace` s for the servers Neovim started in `directory` to exit; kill
    and return those that did not (Neovim starts them in their own session, so killing
    Neovim's process group does not reach them)."""
    deadline = time.monotonic() + grace
    while (left := servers_in(directory)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


def lsp_log(tmp_path: Path) -> str:
    """The tail of Neovim's LSP log (the server's stderr is logged there)."""
    log = tmp_path / "xdg" / "state" / "nvim" / "lsp.log"
    return log.read_text(errors="replace")[-6000:] if log.exists() else "(no lsp.log)"
