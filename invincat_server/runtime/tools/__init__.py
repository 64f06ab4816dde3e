"""The core tools the agent sees: files, search and shell, confined to one workspace.

This package must stay independent of the editor integration (no pygls / lsprotocol,
nothing from invincat_server.lsp or invincat_server.terminal); the editor plugs in
through the DocumentSource protocol instead.

Importing the package (or its light modules: `edits`, `preview`, `documents`) does not
import LangChain: the language server computes edit previews for approvals while the
agent stack still loads. The tool builders (`files`, `search`, `shell`) are imported by
`build_core_tools`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from invincat_server.runtime.policy.workspace import Workspace, WorkspaceError
from invincat_server.runtime.tools.documents import DiskOnly, DocumentSource
from invincat_server.runtime.tools.edits import EditError, apply_edit, unified_diff
from invincat_server.runtime.tools.preview import ProposedChange, preview_change

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from invincat_server.runtime.sandbox import ExecuteSandbox

__all__ = [
    "DiskOnly",
    "DocumentSource",
    "EditError",
    "ProposedChange",
    "Workspace",
    "WorkspaceError",
    "apply_edit",
    "build_core_tools",
    "preview_change",
    "unified_diff",
]


def build_core_tools(
    workspace: Workspace,
    *,
    documents: DocumentSource | None = None,
    execute_timeout: float = 120.0,
    execute_max_timeout: float = 600.0,
    output_cap: int = 30_000,
    sandbox: ExecuteSandbox | None = None,
) -> list[BaseTool]:
    """read_file, write_file, edit_file, ls, glob, grep and execute for ``workspace``.

    ``documents`` overlays editor buffers (default: disk only). ``execute_timeout`` is the
    default command timeout, ``execute_max_timeout`` the most a call may ask for, and
    ``output_cap`` the maximum characters of command output returned. ``sandbox``: the
    OS sandbox commands run in (none: unconfined).
    """
    from invincat_server.runtime.tools.files import build_file_tools
    from invincat_server.runtime.tools.search import build_search_tools
    from invincat_server.runtime.tools.shell import build_shell_tools

    source: DocumentSource = documents if documents is not None else DiskOnly()
    return [
        *build_file_tools(workspace, source),
        *build_search_tools(workspace, source),
        *build_shell_tools(
            workspace,
            execute_timeout=execute_timeout,
            execute_max_timeout=execute_max_timeout,
            output_cap=output_cap,
            sandbox=sandbox,
        ),
    ]
