"""A file per running worker beside the server's socket (`chat-VERSION.workers/PID.json`),
so `invincat server status|stop` still finds a worker whose server has died or was
stopped: an editor's language server, or a chat waiting at an approval, keeps running
after its server (docs/warm-server.md, "Seeing and stopping it").

The worker writes its own record when it starts and removes it when it ends; a worker
killed outright leaves its record behind, which readers drop once its pid is gone (or
has been reused by a process that is not an Invincat worker). Standard library only: the
status command must stay cheap.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from invincat_server.warm.common import process_state

WORKER_TITLE_PREFIX = b"invincat: "  # what setproctitle gives every worker (control.py)
RECORD_MAX_BYTES = 64 * 1024


def records_dir(socket_path: Path) -> Path:
    return socket_path.with_suffix(".workers")


def prepare(socket_path: Path) -> None:
    """Create the records folder (0700) in the server's private runtime directory."""
    directory = records_dir(socket_path)
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, 0o700)


def write(socket_path: Path, description: dict[str, Any]) -> None:
    """The calling worker's record; never follows a planted link, never fails the work."""
    path = records_dir(socket_path) / f"{os.getpid()}.json"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(OSError):
        fd = os.open(path, flags, 0o600)
        with open(fd, "w", encoding="utf-8") as out:
            json.dump(description, out)


def remove(socket_path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(records_dir(socket_path) / f"{os.getpid()}.json")


def running(socket_path: Path) -> list[dict[str, Any]]:
    """The records of workers still running, each as written plus its code version.
    Records of ended workers are removed; unreadable or foreign ones are skipped."""
    directory = records_dir(socket_path)
    code_version = socket_path.stem.removeprefix("chat-")
    found = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    for name in names:
        pid_text = name.removesuffix(".json")
        if not (name.endswith(".json") and pid_text.isdigit()):
            continue
        record = _read(directory / name)
        if record is None or record.get("pid") != int(pid_text):
            continue
        if not _is_worker(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(directory / name)
            continue
        found.append(record | {"codeVersion": code_version})
    return found


def _read(path: Path) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with open(fd, "rb") as source:
        info = os.fstat(source.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        data = source.read(RECORD_MAX_BYTES + 1)
    try:
        record = json.loads(data) if len(data) <= RECORD_MAX_BYTES else None
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _is_worker(pid: int) -> bool:
    """Alive, and still an Invincat worker (not another process that got the pid)."""
    if process_state(pid) is None:
        return False
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return title.startswith(WORKER_TITLE_PREFIX)
