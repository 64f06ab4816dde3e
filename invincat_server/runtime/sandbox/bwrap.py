"""The bubblewrap (`bwrap`) command line that confines one shell command, and the check
that bwrap can create its namespaces here.

The command sees the whole filesystem read-only (`--ro-bind / /`), then, in this order:
a private /tmp, the workspace (writable in `workspace-write`), the workspace's `.git`,
`.invincat` and `.mcp.json` read-only again, and `$INVINCAT_HOME` and the user's runtime
directory (warm-server and session-bus sockets) hidden under empty tmpfs mounts. Every
namespace bwrap can make is new (`--unshare-all`: pid, ipc, uts, cgroup, user where
possible, and network unless allowed), and no capability is kept (`--cap-drop ALL`: run as
root, bwrap would otherwise leave the command CAP_SYS_ADMIN, enough to remount / writable).
`--die-with-parent` ends the sandbox if the server dies.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from invincat_server.runtime.policy.protected_files import PROJECT_SETTINGS_FILES
from invincat_server.runtime.sandbox.modes import SandboxSpec

__all__ = ["bwrap_argv", "find_bwrap", "probe_bwrap"]

BWRAP_VARIABLE = "INVINCAT_BWRAP"
PROBE_TIMEOUT = 30.0  # seconds: generous, a loaded machine may take a while to fork
# Inside the workspace, read-only even in workspace-write: git hooks and config run code
# on the user's next git command; Invincat's project settings grant permissions.
READ_ONLY_NAMES = (".git", ".invincat", *(n for n in PROJECT_SETTINGS_FILES if "/" not in n))


def find_bwrap(env: Mapping[str, str]) -> str | None:
    """`$INVINCAT_BWRAP` if set (a path; tests point it at nothing), else `bwrap` on PATH."""
    chosen = env.get(BWRAP_VARIABLE)
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap", path=env.get("PATH"))


@functools.cache
def probe_bwrap(bwrap: str) -> str | None:
    """None if `bwrap` can create a sandbox here, else why not (one line). Cached: the
    answer does not change while the process runs."""
    argv = [
        bwrap,
        "--die-with-parent",
        "--unshare-all",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        "/bin/sh",
        "-c",
        "true",
    ]
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{bwrap} could not run: {exc}"
    if done.returncode == 0:
        return None
    message = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"{bwrap} cannot create namespaces: " + (message[-1] if message else "no reason given")


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


def _hidden_dirs(home: Path, env: Mapping[str, str]) -> list[str]:
    """Directories the command must not see: Invincat's home (settings, threads, memory)
    and the user's runtime dir (the warm server's and the session bus's sockets: a
    command that connects to them would run outside the sandbox)."""
    found = [os.path.realpath(home)]
    runtime = env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    found.append(os.path.realpath(runtime))
    return [path for path in found if os.path.isdir(path) and path != os.sep]


def bwrap_argv(
    bwrap: str,
    spec: SandboxSpec,
    root: Path,
    home: Path,
    private_tmp: Path,
    env: Mapping[str, str],
) -> list[str]:
    """bwrap's arguments up to and including `--`: append the command to run."""
    real_root = os.path.realpath(root)
    argv = [bwrap, "--die-with-parent", "--unshare-all"]
    if spec.network:
        argv.append("--share-net")
    argv += ["--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--bind", str(private_tmp), "/tmp"]
    hidden = _hidden_dirs(home, env)
    # A folder that holds the workspace (a project inside $INVINCAT_HOME) is hidden first
    # and the workspace put back read-only on top: writes there are writes to Invincat's
    # home. Any other hidden folder is covered after the workspace, in case it lies inside.
    around = [path for path in hidden if _inside(real_root, path)]
    for path in around:
        argv += ["--tmpfs", path]
    writable = spec.mode == "workspace-write" and not around
    if real_root not in hidden:  # the workspace *is* Invincat's home: it stays hidden
        argv += ["--bind" if writable else "--ro-bind", real_root, real_root]
    for name in READ_ONLY_NAMES:
        inner = os.path.join(real_root, name)
        if os.path.lexists(inner):
            argv += ["--ro-bind-try", inner, inner]
    for path in hidden:
        if path not in around:
            argv += ["--tmpfs", path]
    argv += ["--setenv", "TMPDIR", "/tmp", "--chdir", real_root, "--"]
    return argv
