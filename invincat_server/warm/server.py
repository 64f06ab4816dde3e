"""The warm server: a per-user process that has already imported the agent stack and forks
one worker per `invincat chat PROMPT` or `invincat --stdio` (see docs/warm-server.md for
the life cycle).

A worker is the ordinary command line: it gets the client's stdin, stdout and stderr (the
file descriptors themselves, passed over the socket), its working directory, environment,
umask and arguments, and runs `cli.main` exactly as a cold process would. Approvals, the thread
and its records therefore go through the same code and the same threads.sqlite: nothing
lives in the server but imported modules. Nothing here prints: the server's own output
goes to a log file beside its socket.

Run by the client only: python -m invincat_server.warm.server SOCKET VERSION STATE
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from setproctitle import setproctitle

from invincat_server.import_path import drop_directory, drop_working_directory
from invincat_server.warm import worker_records
from invincat_server.warm.common import (
    DEFAULT_IDLE_SECONDS,
    EXIT_CODE_CHANGED,
    IDLE_VARIABLE,
    code_version,
    encode,
    messages,
    peer_pid,
    peer_uid,
    process_state,
    read_message,
)
from invincat_server.warm.control import (
    ServerState,
    Worker,
    answer,
    describe_request,
    process_title,
)

logger = logging.getLogger("invincat_server.warm")

# What a one-shot turn imports (measured with -X importtime): loaded once here, so a worker
# starts with them in memory instead of spending ~2.5 s importing them. The core's list
# (runtime/preload.py, shared with the language server) and the front ends' own modules.
FRONT_END_MODULES = (
    "invincat_server.cli",
    "invincat_server.terminal.app",
    "invincat_server.terminal.line_editor",
    "invincat_server.terminal.rich_render",
    # The language server (`invincat --stdio`) and what its session and memory views use.
    "invincat_server.lsp.server",
    "invincat_server.lsp.projects",
)
TICK_SECONDS = 1.0  # how often an idle server checks its deadline and the code version
REQUEST_TIMEOUT = 30.0  # a connected client must send its request within this


def idle_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get(IDLE_VARIABLE, DEFAULT_IDLE_SECONDS)))
    except ValueError:
        return DEFAULT_IDLE_SECONDS


def warm_up() -> None:
    from invincat_server.runtime.bulk_import import bulk_import
    from invincat_server.runtime.preload import EVERYTHING, preload

    # Frozen before the first fork (what gc.freeze is for): a worker's collections never
    # touch, and so never copy, the pages of the modules it shares with the server.
    with bulk_import():
        preload(FRONT_END_MODULES + EVERYTHING)


def serve(path: Path, version: str, state_file: Path) -> int:
    """Listen on `path` until idle for `idle_seconds()`, the code changes or `invincat
    server stop`. One server per `state_file` (`RUNTIME/invincat/chat-VERSION`): it holds
    `state_file.lock` while it lives."""
    lock = os.open(f"{state_file}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        logger.info("another server already serves %s", path)
        return 0
    # Import first, then check: code that changed while we imported is not ours to serve.
    warm_up()
    if code_version() != version:
        logger.info("the code changed while warming up; exiting")
        return EXIT_CODE_CHANGED
    if threading.active_count() != 1:
        # fork() copies only this thread: a lock held by another one would stay locked.
        logger.error("a preloaded module started a thread; not serving (fork is unsafe)")
        return 1
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # left by a server that died: we hold the lock, so it is nobody's
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the socket is created 0600: no window where it is not
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    worker_records.prepare(path)
    listener.listen(16)
    listener.settimeout(TICK_SECONDS)
    inode = os.stat(path).st_ino
    # Workers are reaped by the kernel; each resets this for its own children (tools).
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    # `kill PID` ends the server through the `finally` below, which removes its socket.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    logger.info("serving %s (version %s, pid %d)", path, version, os.getpid())
    # The process title (setproctitle) hides the command line: say how Python was started
    # (-I, and the -X utf8 / -B its client passed on), which `ps` no longer shows.
    logger.info("interpreter: %s", " ".join(sys.orig_argv[1:]))
    idle, last_used = idle_seconds(), time.monotonic()
    state = ServerState(version, path, Path(f"{state_file}.log"), idle)
    try:
        while True:
            _wake_abandoned_workers(state.workers)
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - last_used > idle:
                    logger.info("idle for %.0f s; exiting", idle)
                    return 0
                if code_version() != version or not _still_ours(path, inode):
                    logger.info("the code changed (or the socket was replaced); exiting")
                    return 0
                continue
            if code_version() != version:
                conn.close()  # the client retries with a fresh server
                logger.info("the code changed; exiting")
                return 0
            outcome = _accept(conn, (listener.fileno(), lock), state)
            if outcome == "stop":
                logger.info("stopped by `invincat server stop`")
                return 0
            if outcome == "worker":  # a status request does not keep an idle server alive
                last_used = time.monotonic()
    finally:
        listener.close()
        if _still_ours(path, inode):
            with contextlib.suppress(OSError):
                path.unlink()


def _exit_on_signal(number: int, _frame: object) -> None:
    raise SystemExit(0)


def _still_ours(path: Path, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _wake_abandoned_workers(workers: dict[int, Worker]) -> None:
    """A worker stopped with its client (Ctrl-Z, docs/warm-server.md) whose client then
    died (`kill -9` of the suspended job) would stay stopped for ever: it cannot even see
    its connection close. Continue it with a hang-up, as the kernel does for a stopped
    process whose process group is orphaned; it then ends like a cold process whose
    terminal went away (any approval it waited for stays pending on disk)."""
    for worker, info in list(workers.items()):
        state = process_state(worker)
        if state is None:
            del workers[worker]  # ended (reaped by the kernel: SIGCHLD is ignored)
        elif state == "T" and process_state(info.client) is None:
            logger.info("worker %d stopped, its client %d gone: hanging up", worker, info.client)
            with contextlib.suppress(OSError):
                os.killpg(worker, signal.SIGHUP)
                os.killpg(worker, signal.SIGCONT)
            del workers[worker]


def _accept(conn: socket.socket, inherited: tuple[int, ...], state: ServerState) -> str | None:
    """Check who connected, read the request, then answer a control request ("control";
    "stop" when the server should exit) or fork the worker ("worker"). `inherited`: the
    server's listening socket and lock, which the worker closes at once: a worker that
    outlives a crashed server (waiting at an approval) must not keep the socket accepting
    into a backlog nobody reads, nor the lock that lets the next server start."""
    fds: list[int] = []
    try:
        uid = peer_uid(conn)  # before reading anything, control requests included
        if uid != os.getuid():
            logger.warning("refused a connection from uid %d", uid)
            return None
        conn.settimeout(REQUEST_TIMEOUT)
        first, fds, _flags, _addr = socket.recv_fds(conn, 65536, 3)
        request = read_message(conn, first) if first else None
        if request is not None and "control" in request:
            return "stop" if answer(conn, request, state) else "control"
        if request is None or len(fds) != 3:
            logger.warning("incomplete request; ignored")
            return None
        client = peer_pid(conn)
        serves, project = describe_request(request, client)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                for fd in inherited:
                    os.close(fd)
                me = Worker(os.getpid(), client, serves, project)
                setproctitle(process_title(me))
                # Outlives this server if need be: `server status` still finds it.
                worker_records.write(state.socket, me.describe())
                code = _worker(conn, request, fds)
            finally:
                worker_records.remove(state.socket)
                os._exit(code)
        logger.info("worker %d started", pid)
        state.workers[pid] = Worker(pid, client, serves, project)
        return "worker"
    except (OSError, ValueError) as exc:
        logger.warning("bad request: %s", exc)
        return None
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        conn.close()


def _worker(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> int:
    """In the forked child: become the client's `invincat`, run the command, report."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # The server inherits whatever ignored signals the client that started it had (under
    # `nohup`: SIGHUP), and so would every worker: its client vanishing, relayed as a
    # hang-up, would then never end it (client.py relays no signal its client ignores).
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    os.setpgid(0, 0)  # its own group: signals for it never reach the server
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    _reopen_stdio(request.get("stdio"))
    os.chdir(str(request["cwd"]))
    # The server's path has no relative entry (it runs with -I, from /), but an entry can
    # still be this very directory (a checkout installed in editable mode): a module the
    # command imports lazily, after this chdir, must never come from the client's project.
    drop_directory(os.getcwd())
    if isinstance(request.get("umask"), int):  # files it creates get the client's modes
        os.umask(request["umask"] & 0o777)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})
    argv = [str(a) for a in request["argv"]]
    sys.argv = ["invincat", *argv]
    conn.sendall(encode({"started": os.getpid()}))  # before any work: see the client
    # Run only once the client says so: a client that gave up waiting (and runs the
    # command cold, or serves its editor itself) has closed the connection instead.
    conn.settimeout(REQUEST_TIMEOUT)
    go = read_message(conn)
    if go is None or go.get("go") is not True:
        return 1
    conn.settimeout(None)
    threading.Thread(target=_relay_signals, args=(conn,), daemon=True).start()
    from invincat_server.cli import main

    try:
        code = main(argv, warm=False)
    except SystemExit as exc:  # argparse errors, like a cold run
        code = exc.code if isinstance(exc.code, int) else 1
    except KeyboardInterrupt:
        code = 130
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(OSError):
        conn.sendall(encode({"exit": code}))
    return code


def _reopen_stdio(formats: object) -> None:
    """Python objects for the client's descriptors, with the encodings and error handlers
    the client's Python chose (UTF-8 when it sent none) and buffered as a process started
    on them would be (stdout line-buffered only at a terminal)."""
    defaults = (("utf-8", "surrogateescape"),) * 2 + (("utf-8", "backslashreplace"),)
    chosen = [_text_format(formats, n, default) for n, default in enumerate(defaults)]
    sys.stdin = open(0, encoding=chosen[0][0], errors=chosen[0][1], closefd=False)
    sys.stdout = open(
        1,
        "w",
        encoding=chosen[1][0],
        errors=chosen[1][1],
        closefd=False,
        buffering=-1,
        newline=None,
    )
    sys.stdout.reconfigure(line_buffering=os.isatty(1))
    sys.stderr = open(2, "w", encoding=chosen[2][0], errors=chosen[2][1], closefd=False)
    sys.stderr.reconfigure(line_buffering=True)


def _text_format(formats: object, index: int, default: tuple[str, str]) -> tuple[str, str]:
    """The client's (encoding, errors) for stream `index`, if it sent a usable one."""
    try:
        encoding, errors = formats[index]  # type: ignore[index]
        codecs.lookup(encoding)
        codecs.lookup_error(errors)
    except (TypeError, IndexError, ValueError, LookupError):
        return default
    return str(encoding), str(errors)


def _relay_signals(conn: socket.socket) -> None:
    """Signals the client received (Ctrl-C) arrive as messages; the client vanishing is a
    hang-up, as for a process whose terminal closed."""
    for message in messages(conn):
        number = message.get("signal")
        if number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGWINCH):
            os.kill(os.getpid(), number)
    os.kill(os.getpid(), signal.SIGHUP)


def main() -> int:
    drop_working_directory()  # started with -I from / already; also if run by hand
    # What `ps` shows instead of `python -I -m invincat_server.warm.server ...`.
    setproctitle("invincat: warm server")
    path, version, state = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    # Our own logger, not the root one: workers keep a cold process's logging untouched.
    fd = os.open(f"{state}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    handler = logging.StreamHandler(open(fd, "a", encoding="utf-8"))
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return serve(path, version, state)


if __name__ == "__main__":
    sys.exit(main())
