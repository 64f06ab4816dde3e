"""The sandbox as `execute` and the approvals see it: how a call will run, whether a
person must be asked every time, and the bwrap command line around it.

A call runs confined when the mode is not `off`, bwrap works here (or, where it cannot,
Landlock does: `landlock_launch.py`), and the call did not ask for `unsandboxed: true`.
Every other call (no sandbox available, or `unsandboxed`) runs unconfined, so no
"always" rule covers it; an `unsandboxed` call is moreover refused
when nobody is there to ask (`--yes`), since only the user's own setting may turn the
sandbox off for a whole run.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from invincat_server.runtime.sandbox.bwrap import bwrap_argv
from invincat_server.runtime.sandbox.hints import sandbox_hint
from invincat_server.runtime.sandbox.landlock_launch import landlock_argv
from invincat_server.runtime.sandbox.modes import SandboxSpec

__all__ = ["ExecuteSandbox"]


TMP_PREFIX = "invincat-sandbox-"
_STALE = re.compile(re.escape(TMP_PREFIX) + r"(\d+)-")


def private_tmp_prefix() -> str:
    """Names carry our pid, so a later process can tell a dead one's leftovers."""
    return f"{TMP_PREFIX}{os.getpid()}-"


def remove_stale_tmp_dirs() -> None:
    """Remove private /tmp folders left by processes that were killed mid-command (a
    SIGKILL skips the cleanup): ours (same uid), real folders, and their pid is gone."""
    base = Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            match = _STALE.match(entry.name)
            if match is None or _pid_alive(int(match.group(1))):
                continue
            with contextlib.suppress(OSError):
                info = entry.lstat()
                if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
                    shutil.rmtree(entry, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def wants_unsandboxed(args: Mapping[str, Any]) -> bool:
    """Exactly `true` asks to leave the sandbox; any other value is not a request (and a
    non-boolean fails the tool's argument check, so such a call never runs)."""
    return args.get("unsandboxed") is True


class ExecuteSandbox:
    """One session's shell sandbox: its spec, and whether bwrap is usable (`unavailable`
    says why not; with `landlock_abi` set, commands are confined by Landlock instead)."""

    def __init__(
        self,
        spec: SandboxSpec,
        *,
        root: Path,
        home: Path,
        bwrap: str | None,
        unavailable: str | None,
        env: Mapping[str, str] | None = None,
        headless: Callable[[], bool] = lambda: False,
        keep_env: tuple[str, ...] = (),
        landlock_abi: int = 0,
    ) -> None:
        self.spec = spec
        self.root = root
        self.home = home
        self.bwrap = bwrap
        self.unavailable = unavailable if spec.confined else None
        self.env = dict(os.environ if env is None else env)
        self.headless = headless
        """True while nobody answers approvals (`--yes`): `unsandboxed` calls are refused."""
        self.keep_env = keep_env
        """Secret-named variables the user lets commands see (runtime/shell_env.py)."""
        self.landlock_abi = landlock_abi if bwrap is None or unavailable else 0
        """The Landlock ABI commands are confined with when bwrap is unusable; 0: none."""

    @property
    def active(self) -> bool:
        """Commands run confined unless they ask otherwise."""
        if not self.spec.confined:
            return False
        return self.landlock_abi > 0 or (self.unavailable is None and self.bwrap is not None)

    def label(self) -> str:
        """How confined commands run: `workspace-write, no network`, or under Landlock
        `workspace-write via Landlock, no network` (network not confined below ABI 4)."""
        if not self.landlock_abi or not self.spec.confined:
            return self.spec.label()
        if self.spec.network:
            network = "network allowed"
        elif self.landlock_abi >= 4:
            network = "no network"
        else:
            network = f"network NOT confined (Landlock ABI {self.landlock_abi})"
        return f"{self.spec.mode} via Landlock, {network}"

    def confines(self, args: Mapping[str, Any]) -> bool:
        return self.active and not wants_unsandboxed(args)

    def asks_always(self, args: Mapping[str, Any]) -> bool:
        """A call no 'always' rule may cover: it would run unconfined although the user
        configured a sandbox (bwrap unavailable, or the call asks to leave it)."""
        return self.spec.confined and not self.confines(args)

    def describe(self, args: Mapping[str, Any]) -> str:
        """The approval description of one `execute` call: what runs and how."""
        command = str(args.get("command", ""))
        if self.spec.confined and wants_unsandboxed(args):
            reason = str(args.get("reason") or "").strip() or "(none given)"
            return (
                f"Run WITHOUT the sandbox? Shell command: {command} — the model asks to run "
                f"it outside the OS sandbox ({self.label()}), where it can write "
                f"anywhere your user can and use the network. Reason given: {reason}"
            )
        if self.confines(args):
            return f"Run shell command: {command} — in the sandbox ({self.label()})"
        why = "sandbox mode off" if not self.spec.confined else self.unavailable
        return f"Run shell command: {command} — WITHOUT a sandbox ({why})"

    def refusal(self, args: Mapping[str, Any]) -> str | None:
        """Why this call must not run at all, or None."""
        if self.spec.confined and wants_unsandboxed(args) and self.headless():
            return (
                "Refused: `unsandboxed: true` needs its own approval, and this run approves "
                "every call without asking (--yes). The command did not run. To run commands "
                "without the sandbox, the user sets the sandbox mode themselves "
                '(`INVINCAT_SANDBOX=off`, or `[sandbox] mode = "off"` in '
                f"{self.home / 'config.toml'})."
            )
        return None

    @contextlib.contextmanager
    def argv(self, args: Mapping[str, Any], shell: list[str]) -> Iterator[list[str]]:
        """The command line to run `shell` (`[bash, -c, command]`) with, confined when it
        should be; a private /tmp for the command lives as long as the block."""
        if not self.confines(args):
            yield shell
            return
        private_tmp = Path(tempfile.mkdtemp(prefix=private_tmp_prefix()))
        try:
            if self.landlock_abi:
                prefix = landlock_argv(self.spec, self.root, self.home, private_tmp)
            else:
                assert self.bwrap is not None  # active without Landlock means bwrap works
                prefix = bwrap_argv(
                    self.bwrap, self.spec, self.root, self.home, private_tmp, self.env
                )
            yield [*prefix, *shell]
        finally:
            shutil.rmtree(private_tmp, ignore_errors=True)

    def hint(self, args: Mapping[str, Any], output: str, exit_code: int | None) -> str | None:
        """A note for the model when a confined command failed like the sandbox makes
        commands fail."""
        if not self.confines(args):
            return None
        return sandbox_hint(
            output, exit_code, self.spec, label=self.label(), landlock=bool(self.landlock_abi)
        )
