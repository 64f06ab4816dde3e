"""Landlock, the kernel's unprivileged file-system and network sandbox, through libc's
`syscall` (ctypes, standard library only): the fallback when bwrap cannot create
namespaces (docs/security.md, "The shell sandbox").

Why not a PyPI package: the maintained Landlock bindings are Rust or Go; the Python ones
(`landlock` on PyPI) are small, lightly maintained and stop at older ABIs, while the three
system calls and two structs used here are stable kernel ABI (include/uapi/linux/landlock.h).

A ruleset is allow-only: every right it *handles* is denied except beneath the paths a rule
names. `restrict_self` applies it to the calling process and everything it executes after.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from dataclasses import dataclass

__all__ = [
    "FILE_RIGHTS",
    "LandlockError",
    "Rights",
    "Ruleset",
    "abi_version",
    "apply_ruleset",
    "drop_capabilities",
    "rights_for",
]

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522

# File-system rights (LANDLOCK_ACCESS_FS_*), with the ABI that introduced each.
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: link or rename across directories
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
# Network rights (LANDLOCK_ACCESS_NET_*), ABI 4: TCP only.
BIND_TCP = 1 << 0
CONNECT_TCP = 1 << 1
# Scopes (LANDLOCK_SCOPE_*), ABI 6: IPC with processes outside the sandbox.
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

# Only these rights may be granted on a non-directory (the kernel refuses others).
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
_ABI1_FS = (1 << 13) - 1


class LandlockError(OSError):
    """A Landlock system call failed: the ruleset was not applied."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the kernel header: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@dataclass(frozen=True)
class Rights:
    """What one ABI lets a ruleset handle."""

    abi: int
    fs: int
    net: int
    scoped: int


def rights_for(abi: int) -> Rights:
    """Every right the ABI knows: REFER from 2, TRUNCATE from 3, TCP bind/connect from 4,
    IOCTL_DEV from 5, scoping from 6 (7 adds only audit-log flags)."""
    fs = _ABI1_FS
    if abi >= 2:
        fs |= REFER
    if abi >= 3:
        fs |= TRUNCATE
    if abi >= 5:
        fs |= IOCTL_DEV
    net = BIND_TCP | CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    return Rights(abi=max(abi, 0), fs=fs, net=net, scoped=scoped)


@dataclass(frozen=True)
class Ruleset:
    """Handled rights and the (path, allowed rights) rules; no network rule is ever
    needed: handled TCP rights with no port rule deny every bind and connect."""

    handled_fs: int
    handled_net: int
    scoped: int
    paths: tuple[tuple[str, int], ...]


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _syscall(number: int, *args: object) -> int:
    fn = _libc().syscall
    fn.restype = ctypes.c_long
    result = int(fn(ctypes.c_long(number), *args))
    if result < 0:
        errno = ctypes.get_errno()
        raise LandlockError(errno, os.strerror(errno))
    return result


@functools.cache
def abi_version() -> int:
    """The kernel's Landlock ABI (1..), or 0 if it has none or it is disabled. Cached:
    it does not change while the process runs."""
    try:
        return _syscall(
            _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
        )
    except (LandlockError, OSError, AttributeError):
        return 0


def _add_path(ruleset_fd: int, path: str, allowed: int) -> None:
    """One rule; a path gone or unopenable costs that rule only (its rights stay denied)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        if not os.path.isdir(f"/proc/self/fd/{fd}"):
            allowed &= FILE_RIGHTS
        if not allowed:
            return
        attr = _PathBeneathAttr(allowed_access=allowed, parent_fd=fd)
        _syscall(
            _SYS_ADD_RULE,
            ctypes.c_int(ruleset_fd),
            ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(attr),
            ctypes.c_uint32(0),
        )
    finally:
        os.close(fd)


def apply_ruleset(ruleset: Ruleset) -> None:
    """Confine this process (and what it executes) to `ruleset`; raises LandlockError
    if the kernel refused, in which case nothing must run."""
    attr = _RulesetAttr(
        handled_access_fs=ruleset.handled_fs,
        handled_access_net=ruleset.handled_net,
        scoped=ruleset.scoped,
    )
    fd = _syscall(
        _SYS_CREATE_RULESET,
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
        ctypes.c_uint32(0),
    )
    try:
        for path, allowed in ruleset.paths:
            _add_path(fd, path, allowed & ruleset.handled_fs)
        # Required for an unprivileged restrict_self; also no setuid program regains rights.
        if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            errno = ctypes.get_errno()
            raise LandlockError(errno, os.strerror(errno))
        _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0))
    finally:
        os.close(fd)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities() -> None:
    """Leave the command no capability, also when the server runs as root: Landlock lets a
    process holding CAP_SYS_PTRACE read (and trace) the unconfined server's memory and
    environment. Emptying the bounding set keeps root's execve from granting them again."""
    libc = _libc()
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap", encoding="ascii").read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        # EPERM without CAP_SETPCAP: such a process has no capability to lose anyway.
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(version=_CAPABILITY_VERSION_3, pid=0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), ctypes.byref(data)) != 0:  # glibc's, any arch
        errno = ctypes.get_errno()
        raise LandlockError(errno, os.strerror(errno))
