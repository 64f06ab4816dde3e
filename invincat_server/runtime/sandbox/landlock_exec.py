"""The Landlock launcher: `python -I -m invincat_server.runtime.sandbox.landlock_exec SPEC
-- PROGRAM ARGS...` confines itself with the ruleset SPEC (JSON, `LandlockSpec`'s fields)
describes and then executes PROGRAM in its place, which inherits the ruleset. Running as
the command's own process keeps shell.py's process-group handling unchanged.

It fails closed: if the ruleset cannot be built or applied, PROGRAM never runs (exit 126,
the reason on stderr).
"""

from __future__ import annotations

import json
import os
import sys

from invincat_server.runtime.sandbox.landlock import (
    LandlockError,
    abi_version,
    apply_ruleset,
    drop_capabilities,
)
from invincat_server.runtime.sandbox.landlock_policy import LandlockSpec, build_ruleset

FAILED = 126  # the shell's "found but could not run"


def _say(message: str) -> None:
    """Only stderr: the command's own output is what reaches the model."""
    sys.stderr.write(f"invincat sandbox: {message}\n")


def _spec(raw: str) -> LandlockSpec:
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the spec is not a JSON object")
    fields = {"mode": str, "network": bool, "root": str, "home": str, "tmp": str}
    for name, kind in fields.items():
        if not isinstance(data.get(name), kind):
            raise ValueError(f"the spec's {name!r} is missing or not a {kind.__name__}")
        if kind is str and ("\x00" in data[name] or not data[name]):
            raise ValueError(f"the spec's {name!r} is empty or holds a NUL byte")
    return LandlockSpec(**{name: data[name] for name in fields})


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        _say("usage: landlock_exec SPEC -- PROGRAM [ARGS...]")
        return 2
    try:
        spec = _spec(argv[0])
        abi = abi_version()
        if abi < 1:
            raise LandlockError(0, "Landlock is not available in this kernel")
        apply_ruleset(build_ruleset(spec, abi))
        drop_capabilities()
    except (ValueError, OSError, RecursionError) as exc:  # RecursionError: a deep spec
        _say(f"Landlock could not be applied, the command did not run: {exc}")
        return FAILED
    env = {**os.environ, "TMPDIR": spec.tmp}
    try:
        os.execve(argv[2], argv[2:], env)
    except OSError as exc:
        _say(f"cannot run {argv[2]}: {exc}")
    return FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
