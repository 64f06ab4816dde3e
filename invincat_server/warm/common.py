"""What the warm chat server and its client share: where the socket lives, the code
version that names it, peer checks and message framing (see docs/warm-server.md).

Imported by the client on every warm `invincat chat`, so it stays on the standard library
and costs a few milliseconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import sys
import sysconfig
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import invincat_server

ENABLE_VARIABLE = "INVINCAT_WARM"
# A server's exit status when the code changed while it imported: nothing will listen, so
# its client stops waiting and runs cold (status 0 means another server is starting).
EXIT_CODE_CHANGED = 3
_OFF_WORDS = frozenset({"0", "off", "false", "no"})
IDLE_VARIABLE = "INVINCAT_WARM_IDLE"
DEFAULT_IDLE_SECONDS = 600.0
MAX_MESSAGE = 4 * 1024 * 1024  # a request is argv + cwd + environment: far below this
_HEADER = struct.Struct(">I")
_MAX_SOCKET_PATH = 107  # sun_path is 108 bytes on Linux, with the terminating NUL
_SOCKET_NAME_EXAMPLE = f"chat-{'0' * 24}.sock"  # what socket_path() names one


class WarmError(Exception):
    """The warm server cannot be used safely (the caller runs cold instead)."""


def code_version() -> str:
    """A hash of the code a process would run: this interpreter, every file of the
    invincat_server package (path, size, modification time) and the installed
    distributions (their names carry their versions). A server started before any of them
    changed has another version, hence another socket name, so no client ever reaches it.

    Size and mtime rather than content: stat-ing the ~300 files takes a few milliseconds on
    every warm start, reading them would take several times that. An edit that keeps the
    size and restores the mtime exactly is not noticed; installs and checkouts change both.
    """
    digest = hashlib.sha256()
    digest.update(f"{sys.executable}\0{sys.version}\0{invincat_server.__version__}\n".encode())
    # The server runs with -I and ignores PYTHON* variables, so they do not change what it
    # imports; a client with other settings still gets a server of its own, which keeps
    # each server's environment (inherited from the client that started it) that of its
    # clients. (Not sys.path itself: its first entry is the script's directory, which
    # differs between `invincat` and the server's `python -I -m`.)
    python_settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("PYTHON"))
    digest.update(repr(python_settings).encode())
    package = Path(invincat_server.__file__).parent
    for root, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(root, name)
            try:
                info = os.stat(path)
            except OSError:
                continue  # removed while we walked: the next check sees the new tree
            relative = os.path.relpath(path, package)
            digest.update(f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    purelib = sysconfig.get_path("purelib")
    try:
        installed = sorted(n for n in os.listdir(purelib) if n.endswith(".dist-info"))
    except OSError:
        installed = []
    digest.update("\n".join(installed).encode())
    return digest.hexdigest()[:24]


def warm_setting(environ: Mapping[str, str]) -> bool | None:
    """INVINCAT_WARM: True for "1" (on, and say why when it cannot be used), False for "0"
    (and other "off" words: every one-shot chat runs in its own process), None when unset
    (on, quietly falling back to a cold run)."""
    value = environ.get(ENABLE_VARIABLE, "").strip().lower()
    if not value:
        return None
    return value not in _OFF_WORDS


def runtime_dir() -> Path:
    """Where the sockets live: `$XDG_RUNTIME_DIR/invincat`, else `/tmp/invincat-UID` (as
    tmux does), also when XDG_RUNTIME_DIR is so long that a socket's path would not fit
    in the 107 bytes a unix socket address holds. Not under $INVINCAT_HOME for that reason."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base):
        directory = Path(base) / "invincat"
        if len(os.fsencode(directory / _SOCKET_NAME_EXAMPLE)) <= _MAX_SOCKET_PATH:
            return _private_dir(directory)
    return _private_dir(Path("/tmp") / f"invincat-{os.getuid()}")


def runtime_dirs() -> list[Path]:
    """The directory `runtime_dir()` picks, if it exists, is ours and private (neither
    created nor tightened here): where every server a client with these settings can reach
    has its socket, of any code version. For `invincat server status|stop`. A session with
    another XDG_RUNTIME_DIR (or none: /tmp/invincat-UID) has its servers elsewhere, and
    lists them from there; one with a private XDG_RUNTIME_DIR never touches them."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    directory = Path("/tmp") / f"invincat-{os.getuid()}"
    if base and os.path.isabs(base):
        candidate = Path(base) / "invincat"
        if len(os.fsencode(candidate / _SOCKET_NAME_EXAMPLE)) <= _MAX_SOCKET_PATH:
            directory = candidate
    try:
        info = os.lstat(directory)
    except OSError:
        return []
    private = not info.st_mode & 0o077 and info.st_uid == os.getuid()
    return [directory] if stat.S_ISDIR(info.st_mode) and private else []


def _private_dir(directory: Path) -> Path:
    """`directory`, created 0700; WarmError when it is a symlink, not ours, or open to
    others and not ours to tighten (a directory another user controls could hold a
    planted socket)."""
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700, parents=True)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise WarmError(f"{directory} is not a directory owned by this user")
    if info.st_mode & 0o077:
        os.chmod(directory, 0o700)  # ours: tighten it rather than give up
    return directory


def socket_path(version: str) -> Path:
    """One socket per user and code version: every $INVINCAT_HOME shares the server (a
    worker takes its home, like the rest of its settings, from the client's environment),
    so a user never has more than one resident server per installed version."""
    return runtime_dir() / f"chat-{version}.sock"


def state_path(version: str) -> Path:
    """Beside the socket, in the private runtime directory: add .log or .lock."""
    return runtime_dir() / f"chat-{version}"


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a unix socket (SO_PEERCRED, Linux)."""
    return _peer_credentials(sock)[1]


def peer_pid(sock: socket.socket) -> int:
    """The pid of the process that connected to a unix socket (SO_PEERCRED, Linux)."""
    return _peer_credentials(sock)[0]


def _peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the peer, as the kernel recorded them when it connected."""
    if not hasattr(socket, "SO_PEERCRED"):
        raise WarmError("this platform cannot tell who is at the other end of a socket")
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    return int(pid), int(uid), int(gid)


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return _HEADER.pack(len(body)) + body


def read_exactly(sock: socket.socket, size: int, start: bytes = b"") -> bytes | None:
    """`size` bytes (counting `start`), or None when the peer closed first."""
    data = bytearray(start)
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def messages(sock: socket.socket) -> Iterator[dict[str, Any]]:
    """The peer's messages until it is gone: the end of the stream, a socket error and a
    malformed message all end it alike (neither side can trust what follows one)."""
    while True:
        try:
            message = read_message(sock)
        except (OSError, ValueError):
            return
        if message is None:
            return
        yield message


def read_message(sock: socket.socket, start: bytes = b"") -> dict[str, Any] | None:
    """One framed JSON object, or None at end of stream; ValueError on a malformed one."""
    head = read_exactly(sock, _HEADER.size, start[: _HEADER.size])
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    if size > MAX_MESSAGE:
        raise ValueError("message too large")
    body = read_exactly(sock, size, start[_HEADER.size :])
    if body is None:
        return None
    message = json.loads(body)
    if not isinstance(message, dict):
        raise ValueError("message is not an object")
    return message


def process_state(pid: int) -> str | None:
    """The state letter of /proc/PID/stat (T: stopped), None when there is no such process
    or it has exited (a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None
    return None if state in ("Z", "X") else state
