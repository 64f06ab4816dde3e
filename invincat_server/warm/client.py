"""`invincat chat PROMPT` and `invincat --stdio` through the warm server (the default;
docs/warm-server.md).

Hands this process's stdin, stdout and stderr (and the text encodings Python chose for
them), working directory, environment, umask and arguments to a worker forked by the
per-user server, relays Ctrl-C, Ctrl-Z and terminal resizes, and exits with the worker's
status. Loads no LangChain: the point is to skip those imports.

Returns None whenever the server cannot be used before the command started (no server
could be started, the code changed under it, another user's socket): the caller then runs
the command itself, cold. Once a worker has started, the command is never run a second
time, whatever happens.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from invincat_server.warm.common import (
    WarmError,
    code_version,
    encode,
    messages,
    peer_pid,
    peer_uid,
    read_message,
    socket_path,
    state_path,
)

START_DEADLINE = 120.0  # a cold server imports the whole stack first; generous on a busy box
POLL_SECONDS = 0.02
BACKGROUND_START_DELAY = 2  # seconds; after a window's `initialize`, before its first chat
REPLY_VARIABLE = "INVINCAT_WARM_REPLY"
DEFAULT_REPLY_SECONDS = 30.0  # accept, read, fork: milliseconds, unless the server is stuck
EXIT_LOST = 1
# SIGWINCH: a terminal resize reaches only the client (the worker is in another session);
# the worker's prompt (an approval question) redraws for the new size.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGWINCH)


def run_warm(
    argv: list[str], *, explain: bool = False, wait: bool = True, announce: bool = False
) -> int | None:
    """The command's exit status, or None if it should run cold (see the module doc).
    `explain` (INVINCAT_WARM=1 set on purpose): say on stderr why it runs cold, and that
    this command started the server. `announce` (not --json): say the latter when stderr
    is a terminal, so a resident process never appears without a word.
    `wait=False` (the language server, whose `initialize` must not wait for a server's
    imports): with no server listening, start one in the background for the next command
    and run this one cold."""
    for _attempt in range(2):  # a server that just found the code changed makes us retry
        try:
            version = code_version()
            path = socket_path(version)
            conn = _connect(path)
            if conn is None and not wait:
                _start_in_background(path, version, state_path(version))
                if explain:
                    _note("starting the warm server for the next start; running cold")
                return None
            say = explain or (announce and os.isatty(2))
            conn = conn or _start_and_connect(path, version, state_path(version), say)
        except (OSError, WarmError) as exc:
            if explain:
                _note(f"warm server unavailable ({exc}); running cold")
            return None
        if conn is None:
            if explain:
                _note("warm server did not start; running cold")
            return None
        try:
            with conn:
                status = _run(conn, argv)
        except WarmError as exc:
            if explain:
                _note(f"{exc}; running cold")
            return None
        if status is not None:
            return status
    return None


def _note(text: str) -> None:
    # stderr only: on `invincat --stdio` stdout carries the protocol.
    sys.stderr.write(f"invincat: {text}\n")
    sys.stderr.flush()


def _connect(path: Path) -> socket.socket | None:
    """A connection to the server at `path` if one listens there and runs as us."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        conn.close()
        return None
    except OSError:
        conn.close()
        raise
    if peer_uid(conn) != os.getuid():
        conn.close()
        raise WarmError(f"{path} is served by another user")
    return conn


def _server_command(path: Path, version: str, state: Path) -> list[str]:
    """`-I` (isolated): no working directory or script directory on `sys.path`, no
    PYTHON* variables (PYTHONPATH, PYTHONSTARTUP, PYTHONHOME: they may come from a project's
    `.env`), no user site-packages. The server imports the stack once for every later
    project and window, so what it imports must not depend on the project or environment
    of whichever client happened to start it (docs/security.md). The two settings a worker
    would otherwise run without are passed as flags, as this client's Python read them
    (clients with other PYTHON* variables have a server of their own: common.code_version):
    UTF-8 mode (PYTHONUTF8, the default encoding of `open` and of subprocess text) and
    PYTHONDONTWRITEBYTECODE."""
    return [
        sys.executable,
        "-I",
        *(["-X", "utf8"] if sys.flags.utf8_mode else []),
        *(["-B"] if sys.flags.dont_write_bytecode else []),
        "-m",
        "invincat_server.warm.server",
        str(path),
        version,
        str(state),
    ]


def _launch(command: list[str], state: Path) -> subprocess.Popen[bytes]:
    log = os.open(f"{state}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # not ours to wait for, and no terminal signals reach it
            close_fds=True,
            # Not the client's directory: the server outlives it (it must not keep a
            # project's directory busy, or see it as its own), and each worker moves to
            # its own client's directory anyway.
            cwd="/",
        )
    finally:
        os.close(log)


def _start_in_background(path: Path, version: str, state: Path) -> None:
    """Start a server a moment from now and return at once. Through `sh -c '... &'`, which
    exits at once and is reaped here: the server is then the init process's child, not a
    zombie of this long-lived process when it exits. The delay lets this window answer
    `initialize` before the server's start-up competes with it for the CPU."""
    later = f'(sleep {BACKGROUND_START_DELAY}; exec "$@") &'  # the log is stdout/stderr
    _launch(["/bin/sh", "-c", later, "sh", *_server_command(path, version, state)], state).wait()


def _start_and_connect(path: Path, version: str, state: Path, say: bool) -> socket.socket | None:
    """`say`: once connected, say on stderr that we started the server, if the one serving
    is ours (not one another client started at the same moment)."""
    server = _launch(_server_command(path, version, state), state)
    deadline = time.monotonic() + START_DEADLINE
    while time.monotonic() < deadline:
        conn = _connect(path)
        if conn is not None:
            if say and peer_pid(conn) == server.pid:
                _note(
                    f"started the warm server (pid {server.pid}; `invincat server status` "
                    "shows it, `invincat server stop` stops it, INVINCAT_WARM=0 turns it off)"
                )
            return conn
        code = server.poll()
        if code not in (None, 0):
            return None  # it failed (its log says why); exit 0 means another one serves
        time.sleep(POLL_SECONDS)
    return None


def reply_seconds() -> float:
    try:
        return max(0.1, float(os.environ.get(REPLY_VARIABLE, DEFAULT_REPLY_SECONDS)))
    except ValueError:
        return DEFAULT_REPLY_SECONDS


def _text_format(stream: object) -> list[str] | None:
    encoding, errors = getattr(stream, "encoding", None), getattr(stream, "errors", None)
    if isinstance(encoding, str) and isinstance(errors, str):
        return [encoding, errors]
    return None


def _terminal_modes() -> list[Any] | None:
    """The modes of our terminal (stdin), None when stdin is no terminal."""
    try:
        return termios.tcgetattr(0)
    except (termios.error, OSError):
        return None


def _set_terminal_modes(modes: list[Any] | None) -> None:
    if modes is not None:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(0, termios.TCSADRAIN, modes)


def _suspender(group: int, modes: list[Any] | None) -> Callable[[int, FrameType | None], None]:
    """Ctrl-Z while a turn streams: the terminal stops only us (the worker is in another
    session), so stop the worker's group first (its tool commands too, as in a cold run),
    then ourselves; when the shell continues us (`fg`, `bg`), continue it. The shell gets
    its terminal back in the `modes` it handed us (a REPL's worker turns echo off while a
    turn runs, and a stopped worker cannot set it back), and the worker its own on `fg`."""

    def suspend(_number: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGSTOP)
        workers = _terminal_modes()
        _set_terminal_modes(modes)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)  # stopped here until SIGCONT
        signal.signal(signal.SIGTSTP, suspend)
        _set_terminal_modes(workers)
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGCONT)

    return suspend


def _run(conn: socket.socket, argv: list[str]) -> int | None:
    modes = _terminal_modes()  # as the shell handed the terminal to us, before any worker
    try:
        mask = os.umask(0)  # the only way to read it; set back at once
        os.umask(mask)
        request = {
            "argv": argv,
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "umask": mask,
            # What Python chose for this process (locale, PYTHONIOENCODING, UTF-8 mode): the
            # worker writes the same bytes a cold run would.
            "stdio": [_text_format(stream) for stream in (sys.stdin, sys.stdout, sys.stderr)],
        }
        data = encode(request)
        sent = socket.send_fds(conn, [data], [0, 1, 2])  # OSError if one of them is closed
        conn.sendall(data[sent:])
        # A server that accepted but does not answer (stopped, stuck) must not hang us, nor
        # an editor's `initialize`. Once we give up, the worker it may still fork never
        # runs anything: it waits for our "go", and finds the connection closed instead.
        conn.settimeout(reply_seconds())
        started = read_message(conn)
        if started is not None and "started" in started:
            conn.sendall(encode({"go": True}))
        conn.settimeout(None)
    except TimeoutError:
        # Not worth a second try: the same server would keep us waiting as long again.
        raise WarmError("the warm server did not answer") from None
    except (OSError, ValueError):
        started = None
    if started is None or "started" not in started:
        return None  # refused before running anything: safe to retry or run cold

    def forward(number: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            conn.sendall(encode({"signal": number}))

    # A signal this process ignores (`nohup` ignores SIGHUP, a script's `cmd &` SIGINT) is
    # not relayed: the worker would act on what a cold run never sees, and a hang-up of
    # the terminal would end the run `nohup` was asked to keep.
    previous = {
        number: signal.signal(number, forward)
        for number in FORWARDED
        if signal.getsignal(number) != signal.SIG_IGN
    }
    group = started["started"]  # the worker's pid, which is also its process group's id
    if isinstance(group, int) and group > 1:  # never 0 or 1: killpg would hit our own group
        previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, _suspender(group, modes))
    try:
        for message in messages(conn):
            if "exit" in message:
                return int(message["exit"])
        _note("the warm server's worker ended without an exit status")
        return EXIT_LOST
    finally:
        _set_terminal_modes(modes)  # also when a worker died with echo off
        for number, handler in previous.items():
            signal.signal(number, handler)
