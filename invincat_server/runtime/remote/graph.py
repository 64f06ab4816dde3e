"""The graph factory `langgraph.json` names: Invincat's worker agent on a LangGraph Server.

`langgraph dev` (or a deployment built from this repository) calls `make_graph` for every
run; the agent is built once per server process and shared, so its memory service, sandbox
and extensions (MCP servers) are opened once. The workspace is `INVINCAT_REMOTE_WORKSPACE`
when set, else the folder the server runs in; the model and every other setting come from
the same environment and `$INVINCAT_HOME/config.toml` as a local Invincat's.

Approvals are ApprovalMiddleware's interrupts (`{"kind": "tool_approval", "batch_id",
"requests": [...]}`), checkpointed by the server: nothing is written or run before someone
resumes the thread with decisions (`invincat remote approve`, docs/remote.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from invincat_server.runtime.config import load_settings
from invincat_server.runtime.policy.workspace import Workspace

log = logging.getLogger(__name__)

WORKSPACE_ENV = "INVINCAT_REMOTE_WORKSPACE"

_agent: Any = None
_lock: asyncio.Lock | None = None


def server_workspace(env: dict[str, str] | None = None) -> Path:
    """The folder the server's tools work in: the configured one, else the current one."""
    env = dict(os.environ) if env is None else env
    configured = env.get(WORKSPACE_ENV)
    folder = Path(configured).expanduser() if configured else Path.cwd()
    if not folder.is_dir():
        raise NotADirectoryError(f"{WORKSPACE_ENV}={folder} is not a folder")
    return folder.resolve()


def _notify(message: str) -> None:
    # The server's log (stderr); never stdout, never a credential (messages are ours).
    log.warning("invincat: %s", message)


async def make_graph() -> Any:
    """The compiled main agent (no checkpointer: the server passes its own)."""
    global _agent, _lock
    if _agent is not None:
        return _agent.graph
    if _lock is None:
        _lock = asyncio.Lock()
    async with _lock:
        if _agent is None:
            from invincat_server.runtime.agent_stack import open_server_agent

            workspace = Workspace(server_workspace())
            log.info("invincat: serving the worker agent on %s", workspace.root)
            _agent = await open_server_agent(load_settings(), workspace, notify=_notify)
    return _agent.graph
