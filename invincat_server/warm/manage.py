"""`invincat server status|stop`: see and stop this user's warm servers, every code
version of them (docs/warm-server.md, "Seeing and stopping it").

Standard library only, like the client: asking a server must not cost the imports the
server exists to save.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import stat
import sys
import time
from pathlib import Path
from typing import Any

from invincat_server.warm import worker_records
from invincat_server.warm.client import reply_seconds
from invincat_server.warm.common import (
    WarmError,
    code_version,
    encode,
    peer_pid,
    peer_uid,
    process_state,
    read_message,
    runtime_dirs,
)

EXIT_NONE_RUNNING = 1  # `status` with no server; documented in docs/protocol.md
EXIT_REFUSED = 1  # `stop` refused (workers running, no --force) or a server did not stop
STOP_DEADLINE = 30.0  # a stopping server removes its socket and exits in milliseconds


def add_server_parser(sub: Any) -> None:
    server = sub.add_parser(
        "server",
        help="the warm server that runs one-shot chats and --stdio: status, stop",
        description="See or stop this user's warm servers (docs/warm-server.md).",
    )
    # The metavar names the choices in "required" errors (not the `server_command` dest).
    commands = server.add_subparsers(dest="server_command", metavar="{status,stop}", required=True)
    status = commands.add_parser("status", help="pid, version, uptime, workers, socket, log")
    status.add_argument("--json", action="store_true", help='print {"servers": [...]}')
    stop = commands.add_parser(
        "stop", help="stop the warm servers (refuses while workers run, unless --force)"
    )
    stop.add_argument(
        "--force",
        action="store_true",
        help="also end running workers (SIGTERM): chats, editors' language servers",
    )
    stop.add_argument("--json", action="store_true", help='print {"stopped": [...], ...}')


def run_server_command(args: argparse.Namespace) -> int:
    try:
        servers = find_servers()
    except WarmError as exc:
        print(f"invincat: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    orphans = find_orphan_workers(servers)
    if args.server_command == "status":
        return _print_status(servers, orphans, as_json=args.json)
    return _stop(servers, orphans, force=args.force, as_json=args.json)


def find_servers() -> list[dict[str, Any]]:
    """The status of every warm server of this user that answers on a socket in the
    runtime directories, of any code version. A server too old to know the status request
    (it closes the connection) is still listed, from what the socket tells: its pid
    (SO_PEERCRED), code version (its name) and log."""
    current = code_version()
    found = []
    for directory in runtime_dirs():
        for sock in sorted(directory.glob("chat-*.sock")):
            info = _ask(sock, {"control": "status"})
            if info is None:
                continue  # nobody listens: left by a server that died
            pid, reply = info
            status = reply.get("status") if reply else None
            if not isinstance(status, dict):
                status = {"pid": pid, "version": None, "workers": None, "answered": False}
            name = sock.name.removeprefix("chat-").removesuffix(".sock")
            status.setdefault("codeVersion", name)
            status.setdefault("socket", str(sock))
            status.setdefault("log", str(sock.with_suffix(".log")))
            status.setdefault("answered", True)
            status["current"] = status["codeVersion"] == current
            found.append(status)
    return found


def find_orphan_workers(servers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Workers still running whose server is gone (it died, or was stopped while they
    waited): found from the record each worker keeps beside its server's socket."""
    # A server started since on the same socket does not list its predecessor's workers.
    served = {
        int(worker["pid"])
        for server in servers
        for worker in server.get("workers") or []
        if isinstance(worker, dict) and isinstance(worker.get("pid"), int)
    }
    orphans: list[dict[str, Any]] = []
    for directory in runtime_dirs():
        for records in sorted(directory.glob("chat-*.workers")):
            running = worker_records.running(records.with_suffix(".sock"))
            orphans.extend(worker for worker in running if worker["pid"] not in served)
    return orphans


def _ask(sock: Path, request: dict[str, Any]) -> tuple[int, dict[str, Any] | None] | None:
    """(the server's pid, its reply or None) for a socket a process of ours listens on;
    None when nobody listens. WarmError for a socket another user serves."""
    try:
        if not stat.S_ISSOCK(os.lstat(sock).st_mode):
            return None
    except OSError:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with conn:
        try:
            conn.connect(str(sock))
        except OSError:  # refused (stale), removed meanwhile
            return None
        if peer_uid(conn) != os.getuid():
            raise WarmError(f"{sock} is served by another user; not asking it anything")
        pid = peer_pid(conn)
        conn.settimeout(reply_seconds())
        try:
            conn.sendall(encode(request))
            return pid, read_message(conn)
        except (OSError, ValueError):
            return pid, None


def _print_status(
    servers: list[dict[str, Any]], orphans: list[dict[str, Any]], *, as_json: bool
) -> int:
    if as_json:
        print(json.dumps({"servers": servers, "orphanWorkers": orphans}))
    elif not servers:
        print("no warm server is running")
    for server in [] if as_json else servers:
        print("\n".join(_status_lines(server)))
    if orphans and not as_json:
        print(f"workers whose warm server has ended: {len(orphans)}")
        for worker in orphans:
            print(f"    {_worker_line(worker)}  (code version {worker['codeVersion']})")
        print("  they end with their chat or editor, or `invincat server stop --force`")
    return 0 if servers else EXIT_NONE_RUNNING


def _status_lines(server: dict[str, Any]) -> list[str]:
    which = "this invincat's code" if server["current"] else "another code version"
    if not server["answered"]:
        return [
            f"warm server pid {server['pid']} (code version {server['codeVersion']}, {which}; "
            "too old to report its status: `invincat server stop` ends it with SIGTERM)",
            f"  socket  {server['socket']}",
            f"  log     {server['log']}",
        ]
    idle = _duration(_number(server.get("idleExitSeconds")))
    up = _duration(_number(server.get("uptimeSeconds")))
    lines = [
        f"warm server pid {server['pid']}: Invincat {server.get('version')}, code version "
        f"{server['codeVersion']} ({which})",
        f"  up      {up} (exits after {idle} idle)",
        f"  socket  {server['socket']}",
        f"  log     {server['log']}",
    ]
    workers = [w for w in server.get("workers") or [] if isinstance(w, dict)]
    lines.append(f"  workers {len(workers)}" + (":" if workers else ""))
    lines.extend(f"    {_worker_line(worker)}" for worker in workers)
    return lines


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _worker_line(worker: dict[str, Any]) -> str:
    serves = "language server (--stdio)" if worker.get("serves") == "stdio" else "chat"
    return f"pid {worker.get('pid')}  {serves:<25}  project {worker.get('project')}"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m {secs}s" if hours else f"{minutes}m {secs}s"


def _stop(
    servers: list[dict[str, Any]], orphans: list[dict[str, Any]], *, force: bool, as_json: bool
) -> int:
    """Refuse, stopping nothing, while any worker runs (a server's, or one whose server
    has ended) unless `force`; else end those workers, stop each server and wait until
    it is gone."""
    busy = [s for s in servers if s.get("workers")]
    stopped: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    refusing = bool(busy or orphans) and not force
    if refusing:
        refused = [_who(s) | {"workers": s["workers"]} for s in busy]
    else:
        orphans = [worker | {"ended": _end_worker(worker)} for worker in orphans]
        for server in servers:
            outcome = _stop_one(server, force)
            (stopped if outcome.get("stopped") else refused).append(outcome)
    if as_json:
        print(json.dumps({"stopped": stopped, "refused": refused, "orphanWorkers": orphans}))
    else:
        _print_stop(servers, stopped, refused)
        _print_orphans_stop(orphans, refusing=refusing)
        if refusing:
            print(
                "invincat: nothing was stopped. Let them finish (an editor's language server "
                "ends when its window closes), or `invincat server stop --force` to end them "
                "(SIGTERM) and stop the server.",
                file=sys.stderr,
            )
    left = orphans if refusing else [w for w in orphans if not w.get("ended")]
    return EXIT_REFUSED if refused or left else 0


def _end_worker(worker: dict[str, Any]) -> bool:
    """SIGTERM to a server-less worker's process group (it leads one, as every worker
    does); True once it has exited."""
    pid = int(worker["pid"])
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGTERM)
    return _gone(pid)


def _print_orphans_stop(orphans: list[dict[str, Any]], *, refusing: bool) -> None:
    if not orphans:
        return
    if refusing:
        print(f"invincat: {len(orphans)} worker(s) whose warm server has ended:", file=sys.stderr)
    else:
        print("ended the workers whose warm server had ended:")
    for worker in orphans:
        line = f"  {_worker_line(worker)}"
        if not refusing and not worker.get("ended"):
            line += f"  (still running after {STOP_DEADLINE:.0f} s)"
        print(line, file=sys.stderr if refusing else sys.stdout)


def _stop_one(server: dict[str, Any], force: bool) -> dict[str, Any]:
    sock, pid = Path(server["socket"]), int(server["pid"])
    if not server["answered"]:  # an older server: `kill PID` is how it is stopped
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        reply: dict[str, Any] = {"stopped": True, "endedWorkers": None}
    else:
        info = _ask(sock, {"control": "stop", "force": force})
        reply = (info[1] if info else None) or {"stopped": False, "error": "no answer"}
    outcome = _who(server) | reply
    if outcome.get("stopped") and not _gone(pid):
        outcome |= {"stopped": False, "error": f"still running after {STOP_DEADLINE:.0f} s"}
    return outcome


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + STOP_DEADLINE
    while process_state(pid) is not None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _who(server: dict[str, Any]) -> dict[str, Any]:
    return {k: server[k] for k in ("pid", "socket", "codeVersion")}


def _print_stop(
    servers: list[dict[str, Any]],
    stopped: list[dict[str, Any]],
    refused: list[dict[str, Any]],
) -> None:
    if not servers:
        print("no warm server is running")
    for outcome in stopped:
        ended = outcome.get("endedWorkers") or []
        print(f"stopped the warm server pid {outcome['pid']}" + (", ending:" if ended else ""))
        for worker in ended:
            print(f"  {_worker_line(worker)}")
    for outcome in refused:
        workers = outcome.get("workers") or []
        print(
            f"invincat: the warm server pid {outcome['pid']} was not stopped: "
            + (f"{len(workers)} worker(s) running:" if workers else str(outcome.get("error"))),
            file=sys.stderr,
        )
        for worker in workers:
            print(f"  {_worker_line(worker)}", file=sys.stderr)
