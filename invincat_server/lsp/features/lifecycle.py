"""`initialize`, `initialized`, `shutdown`, `invincat/status` and `invincat/debug/status`.

`initialize` only records the workspace folders (no settings, no LangChain import), so it
is answered as fast as a bare pygls server; each folder's project starts opening as soon
as that answer is written (lsp/projects.py), and `invincat/status` says how far it got.
`workspace/didChangeWorkspaceFolders` opens and closes projects as folders come and go.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from invincat_server.lsp.documents import path_to_uri, uri_to_path
from invincat_server.lsp.errors import notification_handler, request_handler
from invincat_server.lsp.host import stack_loaded
from invincat_server.lsp.protocol import DEBUG_STATUS, STATUS, StatusResult

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer


def workspace_folders(params: types.InitializeParams) -> list[tuple[str, Path]]:
    """The folders the editor opened, (uri, path), in order: every workspace folder that
    is a local directory, else rootUri/rootPath, else the cwd. Each is worked on in its
    project root (the core's `project_root`, lsp/projects.py), as the terminal does from
    its cwd."""
    folders: list[tuple[str, Path]] = []
    for folder in params.workspace_folders or []:
        path = uri_to_path(folder.uri)
        if path is not None and path.is_dir():
            folders.append((folder.uri, path))
    if folders:
        return folders
    if params.root_uri:
        path = uri_to_path(params.root_uri)
        if path is not None and path.is_dir():
            return [(params.root_uri, path)]
    if params.root_path and Path(params.root_path).is_dir():
        path = Path(params.root_path)
        return [(path_to_uri(path.absolute()), path)]
    return [(path_to_uri(Path.cwd()), Path.cwd())]


@request_handler(types.INITIALIZE)
async def initialize(ls: InvincatLanguageServer, params: types.InitializeParams) -> None:
    ls.projects.configure(workspace_folders(params))
    ls.code_action_settings.from_initialize(params)


@notification_handler(types.INITIALIZED)
async def initialized(ls: InvincatLanguageServer, params: types.InitializedParams) -> None:
    ls.projects.start()  # normally started already, when `initialize` was answered
    # In the background: `initialized` is a notification, and code actions use the
    # initialization options until the client answered.
    ls.code_action_settings.start_fetch()


@notification_handler(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def workspace_did_change_configuration(
    ls: InvincatLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    ls.code_action_settings.start_fetch()


@notification_handler(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def workspace_did_change_workspace_folders(
    ls: InvincatLanguageServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    event = params.event
    await ls.projects.change_folders(
        [folder.uri for folder in event.added or []],
        [folder.uri for folder in event.removed or []],
    )


@request_handler(types.SHUTDOWN)
async def shutdown(ls: InvincatLanguageServer, params: None) -> None:
    # Running turns stop; approvals they wait for stay pending for the next start.
    await ls.projects.close()


@request_handler(STATUS)
async def invincat_status(ls: InvincatLanguageServer, params: Any) -> StatusResult:
    return ls.projects.status()


@request_handler(DEBUG_STATUS)
async def invincat_debug_status(ls: InvincatLanguageServer, params: Any) -> dict[str, Any]:
    encoding = ls.workspace.position_encoding
    hosts = ls.projects.ordered()
    first = hosts[0] if hosts else None
    return {
        "stackLoadedAtInitialize": ls.projects.stack_loaded_at_initialize,
        "stackLoaded": stack_loaded(),
        "sessionOpen": first is not None and first.session is not None,
        "projectDataOpen": first is not None and first.project is not None,
        "error": first.error if first else None,
        "root": str(first.root) if first else None,
        "roots": [str(host.root) for host in hosts],
        "positionEncoding": getattr(encoding, "value", encoding),
        "proposals": ls.proposals.pending_ids(),
    }
