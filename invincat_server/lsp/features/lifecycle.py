"""`initialize`, `initialized`, `shutdown`, `invincat/status` and `invincat/debug/status`.

`initialize` only records the workspace folder (no settings, no LangChain import), so it
is answered as fast as a bare pygls server; the session starts opening as soon as that
answer is written (lsp/host.py), and `invincat/status` says how far it got.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from invincat_server.lsp.documents import uri_to_path
from invincat_server.lsp.errors import notification_handler, request_handler
from invincat_server.lsp.host import stack_loaded
from invincat_server.lsp.protocol import DEBUG_STATUS, STATUS, StatusResult

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer


def workspace_folder(params: types.InitializeParams) -> Path:
    """The folder the editor opened: the first workspace folder, else rootUri/rootPath,
    else the cwd. The session works in its project root (`find_project_root`), as the
    terminal does from its cwd."""
    uris = [folder.uri for folder in params.workspace_folders or []]
    if params.root_uri:
        uris.append(params.root_uri)
    for uri in uris:
        path = uri_to_path(uri)
        if path is not None and path.is_dir():
            return path
    if params.root_path and Path(params.root_path).is_dir():
        return Path(params.root_path)
    return Path.cwd()


@request_handler(types.INITIALIZE)
async def initialize(ls: InvincatLanguageServer, params: types.InitializeParams) -> None:
    ls.host.configure(workspace_folder(params))
    ls.code_action_settings.from_initialize(params)


@notification_handler(types.INITIALIZED)
async def initialized(ls: InvincatLanguageServer, params: types.InitializedParams) -> None:
    ls.host.start()  # normally started already, when `initialize` was answered
    # In the background: `initialized` is a notification, and code actions use the
    # initialization options until the client answered.
    ls.code_action_settings.start_fetch()


@notification_handler(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def workspace_did_change_configuration(
    ls: InvincatLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    ls.code_action_settings.start_fetch()


@request_handler(types.SHUTDOWN)
async def shutdown(ls: InvincatLanguageServer, params: None) -> None:
    # Running turns stop; approvals they wait for stay pending for the next start.
    await ls.host.close()


@request_handler(STATUS)
async def invincat_status(ls: InvincatLanguageServer, params: Any) -> StatusResult:
    return ls.host.status()


@request_handler(DEBUG_STATUS)
async def invincat_debug_status(ls: InvincatLanguageServer, params: Any) -> dict[str, Any]:
    encoding = ls.workspace.position_encoding
    return {
        "stackLoadedAtInitialize": ls.host.stack_loaded_at_initialize,
        "stackLoaded": stack_loaded(),
        "sessionOpen": ls.host.session is not None,
        "projectDataOpen": ls.host.project is not None,
        "error": ls.host.error,
        "root": str(ls.host.root) if ls.host.root else None,
        "positionEncoding": getattr(encoding, "value", encoding),
        "proposals": ls.proposals.pending_ids(),
    }
