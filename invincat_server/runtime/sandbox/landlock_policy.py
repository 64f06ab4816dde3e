"""The Landlock ruleset for one command, matching bwrap's modes as far as an allow-only
ruleset can (docs/security.md, "The shell sandbox", "Under Landlock").

Landlock cannot subtract: a right granted on a folder holds for everything beneath it. So
"everything but X" is granted by walking from the folder down towards X and granting the
right on every sibling along the way, never on a folder that holds X. That is how reads
skip `$INVINCAT_HOME` and writes skip the workspace's `.git/`, `.invincat/` and `.mcp.json`.
Entries created later beside the walked path (a new folder in `/` or in `$HOME`) get no
rule: they are not readable, or not writable, by the command.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from invincat_server.runtime.sandbox import landlock as ll
from invincat_server.runtime.sandbox.bwrap import READ_ONLY_NAMES
from invincat_server.runtime.sandbox.modes import SandboxSpec

__all__ = ["LandlockSpec", "build_ruleset"]

READ = ll.READ_FILE | ll.READ_DIR | ll.EXECUTE
WRITE = (
    ll.WRITE_FILE
    | ll.REMOVE_DIR
    | ll.REMOVE_FILE
    | ll.MAKE_CHAR
    | ll.MAKE_DIR
    | ll.MAKE_REG
    | ll.MAKE_SOCK
    | ll.MAKE_FIFO
    | ll.MAKE_BLOCK
    | ll.MAKE_SYM
    | ll.REFER
    | ll.TRUNCATE
)
# Devices every shell uses (`> /dev/null`, a terminal); writing them changes no file.
DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)
MAX_WALK_ENTRIES = 100_000  # a folder this large along a walked path is left unreadable


@dataclass(frozen=True)
class LandlockSpec:
    """What the launcher is told: the sandbox setting and the folders it is about."""

    mode: str
    network: bool
    root: str
    home: str
    tmp: str

    @classmethod
    def of(cls, spec: SandboxSpec, root: Path, home: Path, tmp: Path) -> LandlockSpec:
        return cls(
            mode=spec.mode,
            network=spec.network,
            root=os.path.realpath(root),
            home=os.path.realpath(home),
            tmp=os.path.realpath(tmp),
        )


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


def grant_except(base: str, excluded: Iterable[str], rights: int) -> list[tuple[str, int]]:
    """Rules granting `rights` beneath `base` except beneath each excluded path: `base`
    itself when no excluded path lies inside it, else its entries one by one (recursing
    into the one that holds an excluded path). Links are not followed: a rule covers
    where a path really is, and a link's target is walked on its own."""
    inside = [path for path in excluded if _inside(path, base)]
    if not inside:
        return [(base, rights)]
    if base in inside:
        return []
    rules: list[tuple[str, int]] = []
    try:
        with os.scandir(base) as entries:
            names = [entry.name for _, entry in zip(range(MAX_WALK_ENTRIES), entries, strict=False)]
    except OSError:
        return rules
    for name in sorted(names):
        child = os.path.join(base, name)
        if os.path.islink(child):
            continue
        rules += grant_except(child, inside, rights)
    return rules


def build_ruleset(spec: LandlockSpec, abi: int) -> ll.Ruleset:
    """The ruleset for `spec` on a kernel with Landlock ABI `abi`."""
    known = ll.rights_for(abi)
    home = spec.home
    rules = grant_except(os.sep, [home] if home != os.sep else [], READ)
    # A project inside Invincat's home is readable (as bwrap puts it back read-only), never
    # writable: every write there is a write to Invincat's home.
    around = _inside(spec.root, home)
    if around and spec.root != home:
        rules.append((spec.root, READ))
    if spec.mode == "workspace-write" and not around:
        protected = [os.path.join(spec.root, name) for name in READ_ONLY_NAMES]
        protected = [path for path in protected if os.path.lexists(path)]
        if _inside(home, spec.root):
            protected.append(home)
        rules += grant_except(spec.root, protected, READ | WRITE)
    rules.append((spec.tmp, READ | WRITE))
    rules += [(device, READ | ll.WRITE_FILE | ll.IOCTL_DEV) for device in DEVICES]
    return ll.Ruleset(
        handled_fs=known.fs,
        handled_net=0 if spec.network else known.net,
        scoped=known.scoped,
        paths=tuple((path, rights & known.fs) for path, rights in rules),
    )
