"""How the server runs a command under Landlock: the launcher's command line
(`landlock_exec.py`), the `INVINCAT_LANDLOCK=off` switch, and the once-per-process check
that the launcher can confine itself here."""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from invincat_server.runtime.sandbox.landlock import abi_version
from invincat_server.runtime.sandbox.landlock_policy import LandlockSpec
from invincat_server.runtime.sandbox.modes import SandboxSpec

__all__ = ["LANDLOCK_VARIABLE", "landlock_argv", "landlock_disabled", "probe_landlock"]

LANDLOCK_VARIABLE = "INVINCAT_LANDLOCK"
LAUNCHER = "invincat_server.runtime.sandbox.landlock_exec"
PROBE_TIMEOUT = 30.0  # seconds: generous, a loaded machine may take a while to start Python


def landlock_disabled(env: Mapping[str, str]) -> bool:
    """`INVINCAT_LANDLOCK=off` (or 0, false, no): never fall back to Landlock."""
    return env.get(LANDLOCK_VARIABLE, "").strip().lower() in {"off", "0", "false", "no"}


def landlock_argv(spec: SandboxSpec, root: Path, home: Path, private_tmp: Path) -> list[str]:
    """The launcher's arguments up to and including `--`: append the command to run.
    `-I`: the workspace's files never shadow the launcher's modules."""
    described = dataclasses.asdict(LandlockSpec.of(spec, root, home, private_tmp))
    return [sys.executable, "-I", "-m", LAUNCHER, json.dumps(described), "--"]


@functools.cache
def probe_landlock() -> str | None:
    """None if the launcher can confine a command here, else why not. Cached: the answer
    does not change while the process runs."""
    abi = abi_version()
    if abi < 1:
        return "Landlock is not available in this kernel"
    with tempfile.TemporaryDirectory(prefix="invincat-landlock-probe-") as tmp:
        argv = landlock_argv(SandboxSpec(mode="read-only"), Path(tmp), Path(tmp), Path(tmp))
        try:
            done = subprocess.run(
                [*argv, "/bin/sh", "-c", "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"the Landlock launcher could not run: {exc}"
    if done.returncode == 0:
        return None
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return "Landlock could not be applied: " + (lines[-1] if lines else "no reason given")
