"""How editors reach the language server: stdio, TCP with a per-start token, a unix socket.

Whoever is connected drives the agent (chooses the workspace, starts turns, approves its
own tool calls), so a network transport must let in only the user's editor:

- `--tcp`: the server makes a random token per start (or takes `INVINCAT_LSP_TOKEN`) and
  writes host, port, token and pid to a 0600 file. The first message on a connection must
  be `initialize` carrying `initializationOptions.token`; anything else (wrong or missing
  token, another method, garbage, silence for `AUTH_TIMEOUT` seconds) closes the connection
  before a byte is answered or a handler runs. The token is removed from the params before
  pygls sees them, so it never reaches a handler or a log.
- `--socket PATH`: a unix socket created 0600 (umask around `bind`, `chmod` before
  `listen`); the kernel lets only the user (and root) connect, and the peer's uid is
  checked again where the OS tells it (SO_PEERCRED).

One authenticated editor is served per process; a connection that fails the check never
counts, so no other process can lock the editor out. While the editor is connected, other
connections are closed at once.

The read loop is ours rather than pygls' `run_async`: it answers undecodable JSON with
`-32700` instead of a traceback, ends cleanly on a broken frame, and is shared with the
authentication gate that must read the first frame itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import re
import secrets
import socket
import stat
import struct
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from invincat_server.lsp.envelope import parse_error
from invincat_server.runtime import private_files

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatProtocol

log = logging.getLogger("invincat.lsp")

TOKEN_ENV = "INVINCAT_LSP_TOKEN"
MIN_TOKEN_LENGTH = 16
AUTH_TIMEOUT = 60.0
"""Seconds a new connection has to send its authenticated `initialize`."""
MAX_FIRST_MESSAGE = 1 << 20
"""Bytes an unauthenticated peer may make the server read (an `initialize` is ~10 KB)."""

_CONTENT_LENGTH = re.compile(rb"content-length:[ \t]*(\d+)[ \t]*", re.IGNORECASE)


class TransportError(Exception):
    """The server cannot listen as asked; the message says why and what to do."""


class FramingError(Exception):
    """The byte stream is not LSP's `Content-Length` framing; it cannot be resynchronised."""


class Reader(Protocol):
    async def readline(self) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


# framing ------------------------------------------------------------------------------
async def read_frame(reader: Reader, *, limit: int | None = None) -> bytes | None:
    """The body of the next message; None at the end of the stream."""
    length: int | None = None
    while True:
        try:
            line = await reader.readline()
        except ValueError as exc:  # asyncio: a header line longer than the stream's limit
            raise FramingError(f"a header line is too long ({exc})") from None
        if not line:
            return None
        line = line.rstrip(b"\r\n")
        if not line:
            if length is not None:
                break
            continue  # blank lines between messages: tolerated, as pygls does
        if match := _CONTENT_LENGTH.fullmatch(line):
            length = int(match.group(1))
    if limit is not None and length > limit:
        raise FramingError(f"a message of {length} bytes, more than the {limit} allowed")
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None
    return body if len(body) == length else None  # stdin's read() is short at EOF


def handle_body(protocol: InvincatProtocol, body: bytes, error_handler: Any) -> None:
    """Decode and dispatch one message body (what pygls' loop does per message)."""
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        protocol.answer_invalid(parse_error(str(exc)))
        return
    try:
        protocol.handle_message(message)
    except Exception as exc:
        log.exception("Unable to handle message")
        error_handler(exc)


async def run_messages(
    reader: Reader, protocol: InvincatProtocol, stop: threading.Event, error_handler: Any
) -> None:
    """Serve messages until the stream ends or `stop` is set. The `exit` notification
    raises SystemExit out of here (pygls' way); callers decide what it ends."""
    while not stop.is_set():
        try:
            body = await read_frame(reader)
        except FramingError as exc:
            log.error("The editor's stream is not LSP framing (%s); closing it.", exc)
            return
        if body is None:
            return
        handle_body(protocol, body, error_handler)


# authentication ---------------------------------------------------------------------
def make_token(env: dict[str, str] | os._Environ[str]) -> str:
    """The token editors must present: `INVINCAT_LSP_TOKEN` if the launcher chose one,
    else a fresh random one."""
    chosen = env.get(TOKEN_ENV)
    if chosen is None or chosen == "":
        return secrets.token_urlsafe(32)
    if len(chosen) < MIN_TOKEN_LENGTH:
        raise TransportError(
            f"{TOKEN_ENV} is {len(chosen)} characters; use at least {MIN_TOKEN_LENGTH} random "
            "ones (or unset it and let invincat make one)."
        )
    return chosen


def check_token(message: Any, token: str) -> tuple[dict[str, Any] | None, str]:
    """(the message without its token, "") if it is `initialize` carrying `token`; else
    (None, why it is refused). `message` is the decoded JSON of the first frame."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None, "the first message was not `initialize`"
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    presented = options.get("token") if isinstance(options, dict) else None
    if not isinstance(presented, str):
        return None, "`initialize` carried no `initializationOptions.token`"
    if not secrets.compare_digest(presented.encode(), token.encode()):
        return None, "`initialize` carried a wrong token"
    assert isinstance(params, dict) and isinstance(options, dict)
    rest = {key: value for key, value in options.items() if key != "token"}
    return {**message, "params": {**params, "initializationOptions": rest}}, ""


async def read_authenticated_initialize(reader: Reader, token: str) -> tuple[bytes | None, str]:
    """(the first message re-encoded without the token, "") or (None, why refused)."""
    try:
        body = await asyncio.wait_for(read_frame(reader, limit=MAX_FIRST_MESSAGE), AUTH_TIMEOUT)
    except TimeoutError:
        return None, f"no `initialize` within {AUTH_TIMEOUT:.0f} s"
    except (FramingError, ConnectionError) as exc:
        return None, str(exc)
    if body is None:
        return None, "it closed before sending `initialize`"
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None, "the first message was not JSON"
    cleaned, why = check_token(message, token)
    return (json.dumps(cleaned).encode() if cleaned is not None else None), why


def peer_uid(writer: asyncio.StreamWriter) -> int | None:
    """The uid of a unix-socket peer where the OS tells it (Linux); else None."""
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", raw)[1]


# where to listen ------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, "localhost")."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def bind_private_socket(path: Path) -> socket.socket:
    """A unix socket bound at `path` with mode 0600, not yet listening.

    An existing `path` is replaced only if it is a socket nobody listens on any more (a
    server that was killed); anything else is refused rather than deleted."""
    if os.path.lexists(path):
        mode = os.lstat(path).st_mode
        if not stat.S_ISSOCK(mode):
            raise TransportError(f"{path} exists and is not a socket; refusing to replace it.")
        if _socket_is_live(path):
            raise TransportError(f"Another server is listening on {path}.")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        # umask makes the socket 0600 from its creation: a chmod afterwards would leave a
        # moment in which another user could connect.
        old_umask = os.umask(0o177)
        try:
            sock.bind(str(path))
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
    except OSError as exc:
        sock.close()
        raise TransportError(f"Cannot create the socket {path}: {exc}.") from None
    return sock


def _socket_is_live(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(2)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        return False
    except OSError:
        return True  # cannot tell: do not delete it
    finally:
        probe.close()
    return True


def default_info_file(env: dict[str, str] | os._Environ[str]) -> Path:
    from invincat_server.runtime.config import default_home

    return default_home(env) / "run" / f"lsp-{os.getpid()}.json"


def write_connection_info(path: Path, info: dict[str, Any]) -> None:
    """Write `info` to `path` readable by the user only, atomically (a reader never sees
    half a file, and a file or symlink planted at `path` is replaced, not written
    through)."""
    # Every folder it creates is 0700, $INVINCAT_HOME too when it is new (runtime/run/).
    private_files.make_dirs(path.parent)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:  # mkstemp: mode 0600
            json.dump(info, fh)
            fh.write("\n")
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def remove_file(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()
