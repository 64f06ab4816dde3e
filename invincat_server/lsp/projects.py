"""Multi-root workspaces: every workspace folder is its own project, and every request
goes to the project it concerns (docs/protocol.md, "Multi-root workspaces").

A project is a project root (the core's `project_root` of a folder, as every front end
finds it: runtime/project/root.py); folders with the same
root share one `SessionHost` (lsp/host.py: its ProjectData, Session, approvals, project
memory, workspace rules). `Projects` owns the hosts, the folder list, and answers "which
project?" for a uri, a `folder` param, a thread, an approval. It also holds what is
shared by all projects: the one import of the agent stack, the start-up timing of
`initialize`, the aggregated `invincat/status`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import to_fs_path

from invincat_server import STARTED
from invincat_server.lsp.documents import path_to_uri, uri_to_path
from invincat_server.lsp.errors import rpc_error
from invincat_server.lsp.host import SessionHost, import_stack, stack_loaded
from invincat_server.lsp.protocol import STATUS_CHANGED, ErrorCode, StatusResult
from invincat_server.runtime.project.root import project_root
from invincat_server.runtime.project.startup import combined

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer
    from invincat_server.runtime.project import Projects as CoreProjects
    from invincat_server.runtime.records import ThreadInfo

log = logging.getLogger("invincat.lsp.projects")

NO_FOLDER = "No workspace folder is open; open a folder to use Invincat."


@dataclass(frozen=True)
class Folder:
    """A workspace folder as the editor named it, and its project root."""

    uri: str
    path: Path
    root: Path


def _real(path: Path) -> Path:
    """A folder's or a document's own real path (not its project root): documents are
    routed to the innermost workspace folder holding them, whichever spelling names it."""
    return Path(os.path.realpath(path))


def _same_folder(uri: str, other: str) -> bool:
    """Two uris naming one folder the same way (one may be percent-encoded differently):
    not a folder and a symlink to it, which are two workspace folders of one project."""
    if uri == other:
        return True
    path = to_fs_path(uri)  # as named: uri_to_path would resolve the link
    return path is not None and path == to_fs_path(other)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def context_uri(context: Any) -> str | None:
    """The uri a chat's `context` is about: the active document's, else the first
    selection's, else the first attachment's (shape errors are reported later, by
    lsp/chat_context.py, with their JSON path)."""
    if not isinstance(context, dict):
        return None
    active = context.get("activeDocument")
    if isinstance(active, dict) and isinstance(active.get("uri"), str):
        return str(active["uri"])
    for key in ("selections", "attachments"):
        items = context.get(key)
        if isinstance(items, list) and items and isinstance(items[0], dict):
            uri = items[0].get("uri")
            if isinstance(uri, str):
                return uri
    return None


class Projects:
    """The open projects, keyed by project root, and the routing of requests to them."""

    def __init__(self, ls: InvincatLanguageServer) -> None:
        self._ls = ls
        self.folders: list[Folder] = []
        self.hosts: dict[Path, SessionHost] = {}
        self.stack_loaded_at_initialize: bool | None = None
        self.initialize_ms: float | None = None
        self._requested: list[tuple[str, Path]] | None = None
        self._stop = threading.Event()
        self._stack: asyncio.Future[float] | None = None
        self._approvals: dict[str, SessionHost] = {}
        self._told: set[str] = set()
        self._last_status: dict[str, Any] | None = None
        self._closing = False
        self._close_task: asyncio.Future[None] | None = None
        self._core: CoreProjects | None = None
        self._core_lock = threading.Lock()  # hosts open their projects in worker threads

    @property
    def core(self) -> CoreProjects:
        """The core's registry (runtime/project/): one Project per root in the process.
        Made on first use: `initialize` must not import it."""
        with self._core_lock:
            if self._core is None:
                from invincat_server.runtime.project import Projects as CoreProjects

                self._core = CoreProjects()
            return self._core

    # start-up --------------------------------------------------------------------
    def configure(self, folders: list[tuple[str, Path]]) -> None:
        """Called from `initialize`, which must stay cheap: only the folders (uri, path)
        are recorded; project roots, settings and the stack come later."""
        self._requested = folders
        self.stack_loaded_at_initialize = stack_loaded()

    def initialize_answered(self) -> None:
        """The protocol wrote a response: if it was `initialize`'s, open every project now,
        without waiting for the client's `initialized`."""
        if self._requested is None or self.initialize_ms is not None:
            return
        self.initialize_ms = round((time.perf_counter() - STARTED) * 1000, 1)
        for uri, path in self._requested:
            self._add(uri, path)
        self.start()

    def start(self) -> None:
        """Open every project in the background (idempotent)."""
        for host in self.hosts.values():
            host.start()

    async def load_stack(self) -> float:
        """Import the agent stack once for every project; seconds it took."""
        if self._stack is None:
            self._stack = asyncio.ensure_future(
                asyncio.to_thread(import_stack, self._stop, self._ls.foreground.wait_idle)
            )
        # Shielded: a project closed while it waits must not cancel the others' import.
        return await asyncio.shield(self._stack)

    # folders ---------------------------------------------------------------------
    def _add(self, uri: str, path: Path) -> SessionHost:
        path = _real(path)
        root = project_root(path)
        # Keyed by the uri the editor named: a folder and a symlink to it are two folders
        # of one project, and removing one leaves the other (and the project) open.
        self.folders = [f for f in self.folders if not _same_folder(f.uri, uri)]
        self.folders.append(Folder(uri, path, root))
        host = self.hosts.get(root)
        if host is None:
            host = SessionHost(self._ls, self, root)
            self.hosts[root] = host
        return host

    async def change_folders(self, added: list[str], removed: list[str]) -> None:
        """`workspace/didChangeWorkspaceFolders`: open added folders' projects in the
        background; close removed ones no other folder uses (their running turns stop,
        their pending approvals stay saved for the next time the folder opens)."""
        for uri in removed:
            self.folders = [f for f in self.folders if not _same_folder(f.uri, uri)]
        gone = [
            h for root, h in self.hosts.items() if not any(f.root == root for f in self.folders)
        ]
        for uri in added:
            path = uri_to_path(uri)
            if path is None or not path.is_dir():
                log.warning("ignored the added workspace folder %s: not a local directory", uri)
                continue
            host = self._add(uri, path)
            if host in gone:
                gone.remove(host)
            if self.initialize_ms is not None:
                host.start()
        for host in gone:
            await self._close_project(host)
        self.announce()

    async def _close_project(self, host: SessionHost) -> None:
        del self.hosts[host.root]
        self._approvals = {k: h for k, h in self._approvals.items() if h is not host}
        await host.close(editor_stays=True)
        self._ls.proposals.remove_where(root=host.root)
        self._ls.memory_sync.forget(host.root)
        log.info("closed the project %s (its last workspace folder was removed)", host.root)

    # routing ---------------------------------------------------------------------
    def ordered(self) -> list[SessionHost]:
        """The open projects in folder order."""
        hosts: list[SessionHost] = []
        for folder in self.folders:
            host = self.hosts.get(folder.root)
            if host is not None and host not in hosts:
                hosts.append(host)
        return hosts

    def first(self) -> SessionHost:
        """The first folder's project: requests that name none go there."""
        hosts = self.ordered()
        if not hosts:
            raise rpc_error(ErrorCode.INVALID_PARAMS, NO_FOLDER)
        return hosts[0]

    def folder_uri(self, root: Path) -> str:
        """The uri of the first folder of the project at `root`."""
        for folder in self.folders:
            if folder.root == root:
                return folder.uri
        return path_to_uri(root)

    def find_path(self, path: Path) -> SessionHost | None:
        """The project of the innermost folder holding `path`; else of the innermost
        project root holding it (a folder may be a subdirectory of its project)."""
        path = _real(path)
        folders = [f for f in self.folders if _inside(path, f.path)]
        if folders:
            best = max(folders, key=lambda f: len(f.path.parts))
            return self.hosts.get(best.root)
        roots = [root for root in self.hosts if _inside(path, root)]
        return self.hosts[max(roots, key=lambda r: len(r.parts))] if roots else None

    def find_uri(self, uri: str) -> SessionHost | None:
        path = uri_to_path(uri)
        return self.find_path(path) if path is not None else None

    def for_folder(self, folder: str | None, method: str) -> SessionHost:
        """The project a request's `folder` param names; the first folder's without it."""
        if folder is None:
            return self.first()
        host = self.find_uri(folder)
        if host is None:
            raise rpc_error(ErrorCode.INVALID_PARAMS, self._outside(folder, method))
        return host

    def _outside(self, uri: str, method: str) -> str:
        if not self.folders:
            return f"Invalid params for {method}: {NO_FOLDER}"
        names = ", ".join(f.uri for f in self.folders)
        return (
            f"Invalid params for {method}: `folder` {uri} is in no open workspace folder "
            f"(open: {names})."
        )

    async def thread(self, thread_id: str) -> tuple[ThreadInfo | None, SessionHost | None]:
        """The saved thread (None if unknown) and the open project it belongs to (None if
        its project is not open). Threads live in the per-user store."""
        project = await self.first().project_data()
        for info in await project.threads(all_workspaces=True):
            if info.thread_id == thread_id:
                # `workspace` is the root the thread was recorded under (already a
                # project root): only its spelling is made canonical, not searched again.
                return info, self.hosts.get(_real(Path(info.workspace)))
        return None, None

    async def for_chat(
        self, folder: str | None, context: Any, thread_id: str | None, method: str
    ) -> SessionHost:
        """The project of a chat: `folder` > the context's document > the thread's project
        > the first folder. A thread of another open project is refused."""
        host = self.for_folder(folder, method) if folder is not None else None
        if host is None and (uri := context_uri(context)) is not None:
            host = self.find_uri(uri)  # outside every folder: refused as context later
        if thread_id is not None:
            _info, owner = await self.thread(thread_id)
            if host is None:
                host = owner
            elif owner is not None and owner is not host:
                raise rpc_error(
                    ErrorCode.INVALID_PARAMS,
                    f"Invalid params for {method}: thread {thread_id} belongs to {owner.root}, "
                    f"not {host.root}; start a new thread there or continue it in its project.",
                )
        return host or self.first()

    def approval_seen(self, approval_id: str, host: SessionHost) -> None:
        """A live turn of `host` asked for `approval_id`."""
        self._approvals[approval_id] = host

    async def for_approval(self, approval_id: str) -> SessionHost:
        """The project holding the approval. One of a project that is not open is refused
        (-32602): deciding it elsewhere would resume its turn in the wrong root. Unknown
        or already decided: the first folder's (its session answers why not)."""
        host = self._approvals.get(approval_id)
        if host is not None and not host.closed:
            return host
        proposal = self._ls.proposals.get(approval_id)
        if proposal is not None and proposal.root in self.hosts:
            return self.hosts[proposal.root]
        project = await self.first().project_data()
        pending = await project.pending_approvals(all_workspaces=True)
        request = next((r for r in pending if r.get("approval_id") == approval_id), None)
        thread_id = request.get("thread_id") if request is not None else None
        if not isinstance(thread_id, str):
            return self.first()
        info, owner = await self.thread(thread_id)
        if owner is not None:
            return owner
        if info is None:
            return self.first()
        raise rpc_error(
            ErrorCode.INVALID_PARAMS,
            f"Approval {approval_id} belongs to thread {thread_id} of {info.workspace}, which "
            "is not open; open that folder to decide it.",
        )

    def cancel_turn(self, turn_id: str) -> bool:
        return any(host.cancel_turn(turn_id) for host in self.ordered())

    # status ----------------------------------------------------------------------
    def status(self) -> StatusResult:
        """`invincat/status`: `failed` if any project failed, else `starting` while any
        opens, else `ready`; the first project's timings; one entry per project."""
        hosts = self.ordered()
        phases = [host.startup.phase for host in hosts]
        state = combined(phases, begun=self.initialize_ms is not None)
        timings = (
            dict(hosts[0].timings)
            if hosts
            else {"initializeMs": self.initialize_ms, "stackImportMs": None, "sessionOpenMs": None}
        )
        result: dict[str, Any] = {"state": state, "timings": timings}
        failed = next((h.startup.message for h in hosts if h.startup.message), None)
        if state == "failed" and failed is not None:
            result["message"] = failed
        projects = []
        for host in hosts:
            entry: dict[str, Any] = {
                "folder": self.folder_uri(host.root),
                "root": str(host.root),
                "state": host.startup.phase,
            }
            if host.startup.message:
                entry["message"] = host.startup.message
            projects.append(entry)
        result["projects"] = projects
        return result  # type: ignore[return-value]

    def announce(self) -> None:
        """`invincat/statusChanged`, when the status changed."""
        if self._closing:
            return
        status = dict(self.status())
        if status != self._last_status:
            self._last_status = status
            self._ls.protocol.notify_json(STATUS_CHANGED, status)

    def tell_user(self, message: str, *, error: bool = False) -> None:
        """Once per message: every project failing for the same reason (the model is
        not configured) is one window message, not one per folder."""
        if message not in self._told:
            self._told.add(message)
            self._ls.tell_user(message, error=error)

    # closing ---------------------------------------------------------------------
    async def close(self) -> None:
        """Close every project (idempotent, shielded: see `SessionHost.close`)."""
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._close_once())
        await asyncio.shield(self._close_task)

    async def _close_once(self) -> None:
        self._closing = True
        self._stop.set()
        await self._ls.memory_sync.close()
        await asyncio.gather(*(host.close() for host in self.hosts.values()))
