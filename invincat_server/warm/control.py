"""What the warm server knows about itself and its workers, and its answers to the
control requests of `invincat server status|stop` (docs/warm-server.md, "Seeing and
stopping it").

A control request is one framed message without descriptors, `{"control": "status"}` or
`{"control": "stop", "force": bool}`, on the same socket as the work requests; the server
has checked the peer's uid (SO_PEERCRED) before it reads either kind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import invincat_server
from invincat_server.warm.common import encode, process_state


@dataclass(frozen=True)
class Worker:
    """One forked worker: who it serves and what, for `status` and its process title."""

    pid: int
    client: int  # the pid of the client process it serves (SO_PEERCRED)
    serves: str  # "chat" or "stdio" (the language server), from the command line
    project: str
    started: float = field(default_factory=time.time)

    def describe(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "serves": self.serves,
            "project": self.project,
            "startedAt": _iso(self.started),
        }


@dataclass
class ServerState:
    version: str
    socket: Path
    log: Path
    idle_seconds: float
    started: float = field(default_factory=time.time)
    workers: dict[int, Worker] = field(default_factory=dict)

    def running_workers(self) -> list[Worker]:
        """The workers still running (ended ones are reaped by the kernel and dropped)."""
        for pid in [pid for pid in self.workers if process_state(pid) is None]:
            del self.workers[pid]
        return list(self.workers.values())

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "version": invincat_server.__version__,
            "codeVersion": self.version,
            "startedAt": _iso(self.started),
            "uptimeSeconds": round(time.time() - self.started, 1),
            "idleExitSeconds": self.idle_seconds,
            "socket": str(self.socket),
            "log": str(self.log),
            "workers": [worker.describe() for worker in self.running_workers()],
        }


def describe_request(request: dict[str, Any], client: int) -> tuple[str, str]:
    """(what a worker serves, its project) from a work request: `--stdio` is an editor's
    language server, anything else the chat command line. The project is the root found
    from the directory it works in (`--cwd DIR`, else the client's directory); for the
    language server, the directory the editor started it in."""
    raw_argv, cwd = request.get("argv"), request.get("cwd")
    # Only described here: a malformed request still fails in its own worker, as before.
    argv = [str(a) for a in raw_argv] if isinstance(raw_argv, list) else []
    serves = "stdio" if "--stdio" in argv else "chat"
    directory = Path(cwd if isinstance(cwd, str) and cwd else "/")
    for index, arg in enumerate(argv):
        if arg == "--cwd" and index + 1 < len(argv):
            directory = directory / argv[index + 1]
        elif arg.startswith("--cwd="):
            directory = directory / arg.removeprefix("--cwd=")
    from invincat_server.runtime.project.root import project_root

    try:  # the root the worker's front end opens, so `status` names the same project
        project = project_root(directory)
    except (OSError, ValueError, RuntimeError):  # unreadable, a NUL byte, a link loop
        return serves, str(directory)
    return serves, str(project)


def process_title(worker: Worker) -> str:
    kind = "language server worker" if worker.serves == "stdio" else "chat worker"
    return f"invincat: {kind} (project {worker.project})"


def answer(conn: socket.socket, request: dict[str, Any], state: ServerState) -> bool:
    """Answer one control request; True when the server should now stop (the caller
    removes its socket on the way out). `stop` without `force` refuses while workers run:
    a worker may be an editor's language server, which must not end without the user
    deciding it. With `force`, each worker's process group gets SIGTERM (it ends as a cold
    process sent SIGTERM would; an approval it waited for stays pending on disk)."""
    kind = request.get("control")
    if kind == "status":
        conn.sendall(encode({"status": state.status()}))
        return False
    if kind != "stop":
        conn.sendall(encode({"error": f"unknown control request {kind!r}"}))
        return False
    workers = state.running_workers()
    if workers and request.get("force") is not True:
        described = [worker.describe() for worker in workers]
        conn.sendall(encode({"stopped": False, "workers": described, **_who(state)}))
        return False
    for worker in workers:
        with contextlib.suppress(OSError):
            os.killpg(worker.pid, signal.SIGTERM)
    ended = [worker.describe() for worker in workers]
    conn.sendall(encode({"stopped": True, "endedWorkers": ended, **_who(state)}))
    return True


def _who(state: ServerState) -> dict[str, Any]:
    return {"pid": os.getpid(), "socket": str(state.socket), "codeVersion": state.version}


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="seconds")
