"""An OS sandbox for `execute`, with bubblewrap (docs/security.md, "The shell sandbox").

`open_sandbox` resolves one session's setting (user, environment, project; `project.py`),
reports the ignored keep_env values, the user's and the project's (`shell_env.py`: which
variables commands see), checks once that bwrap works here (`bwrap.py`), else that Landlock
does (`landlock_launch.py`, unless `INVINCAT_LANDLOCK=off`), and returns the
`ExecuteSandbox` the execute tool runs commands through and the approvals consult
(`gate.py`): confined calls are described as such, unconfined ones ask every time.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from invincat_server.runtime.config import Settings
from invincat_server.runtime.sandbox.bwrap import find_bwrap, probe_bwrap
from invincat_server.runtime.sandbox.gate import (
    ExecuteSandbox,
    remove_stale_tmp_dirs,
    wants_unsandboxed,
)
from invincat_server.runtime.sandbox.landlock import abi_version
from invincat_server.runtime.sandbox.landlock_launch import landlock_disabled, probe_landlock
from invincat_server.runtime.sandbox.modes import SandboxSpec
from invincat_server.runtime.sandbox.project import resolve_spec
from invincat_server.runtime.shell_env import report_project_keep_env

__all__ = ["ExecuteSandbox", "SandboxSpec", "open_sandbox", "wants_unsandboxed"]


async def open_sandbox(
    settings: Settings,
    root: Path,
    *,
    trust_project: bool,
    notify: Callable[[str], None],
    headless: Callable[[], bool],
) -> ExecuteSandbox:
    """The session's sandbox; tells the user once when it is configured but unusable."""
    spec = resolve_spec(settings, root, trust_project=trust_project, notify=notify)
    for warning in settings.shell_env_warnings:
        notify(warning)
    report_project_keep_env(root, settings.home, notify)
    env = dict(os.environ)
    bwrap = find_bwrap(env) if spec.confined else None
    unavailable = None
    if spec.confined:
        if bwrap is None:
            unavailable = "bwrap not found"
        else:
            unavailable = await asyncio.to_thread(probe_bwrap, bwrap)
        await asyncio.to_thread(remove_stale_tmp_dirs)
    landlock_abi = 0
    if unavailable:
        landlock_abi, unavailable = await _landlock_fallback(unavailable, env)
    if unavailable is None and landlock_abi:
        _notify_landlock(spec, landlock_abi, bwrap, notify)
    elif unavailable:
        notify(
            f"The shell sandbox ({spec.label()}) is configured but unavailable: "
            f"{unavailable}. Commands run unconfined, and every command asks for approval "
            "(no 'always' rule covers it). Install bubblewrap (Debian: `apt-get install "
            "bubblewrap`) or allow user namespaces, or set the sandbox mode to off "
            "(`INVINCAT_SANDBOX=off`)."
        )
    return ExecuteSandbox(
        spec,
        root=root,
        home=settings.home,
        bwrap=bwrap,
        unavailable=unavailable,
        env=env,
        headless=headless,
        keep_env=settings.shell_keep_env,
        landlock_abi=landlock_abi,
    )


async def _landlock_fallback(bwrap_problem: str, env: dict[str, str]) -> tuple[int, str | None]:
    """(ABI, None) when Landlock confines commands instead of bwrap, else (0, why not)."""
    if landlock_disabled(env):
        return 0, f"{bwrap_problem}; Landlock turned off (INVINCAT_LANDLOCK=off)"
    problem = await asyncio.to_thread(probe_landlock)
    if problem:
        return 0, f"{bwrap_problem}; {problem}"
    return abi_version(), None


def _notify_landlock(
    spec: SandboxSpec, abi: int, bwrap: str | None, notify: Callable[[str], None]
) -> None:
    why = "bwrap not found" if bwrap is None else f"{bwrap} cannot create namespaces here"
    network = (
        "TCP bind and connect are blocked; UDP and Unix sockets are not"
        if abi >= 4
        else "the network is NOT confined (this kernel's Landlock is older than ABI 4)"
    )
    notify(
        f"The shell sandbox ({spec.label()}) uses Landlock (ABI {abi}) because {why}. "
        "Its limits: writes are confined as with bwrap, but new entries cannot be created "
        "at the top of the workspace while it holds .git, .invincat or .mcp.json; reads are "
        "allowed except Invincat's home (folders listing it, such as / or your home, "
        f"cannot be listed); the host's /tmp is read-only (TMPDIR is private); {network}. "
        "Install bubblewrap or allow user namespaces for the full sandbox."
    )
