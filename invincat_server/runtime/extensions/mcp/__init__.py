"""MCP servers as agent tools (docs/mcp.md).

`mcp_provider` reads the user config (`$INVINCAT_HOME/mcp.json`), the servers an editor
passed (option `client_mcp_servers`, from ACP) and, when trusted, the project configs
(`.mcp.json`, `.invincat/mcp.json`), starts every server concurrently, and
adds one tool per server tool, named `<server>__<tool>`. MCP tools ask for approval like
any tool outside FREE_TOOLS unless the server's `autoApprove` lists them. A server that
fails to start, or dies later, is reported through `ctx.notify`; the session goes on
without it and calls to its tools return a tool error.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.extensions.mcp.config import (
    LoadedConfig,
    load_file,
    load_servers,
    merge,
    project_config_paths,
    user_config_path,
)
from invincat_server.runtime.extensions.mcp.trust import TRUST_FILE, TrustStore

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse

    from invincat_server.runtime.extensions import ExtensionContext, Extensions
    from invincat_server.runtime.extensions.mcp.client import McpConnection

__all__ = ["TRUST_FILE", "TrustStore", "mcp_provider"]

log = logging.getLogger("invincat.mcp")


def _trust_command(ctx: ExtensionContext) -> str:
    return f"invincat chat --trust-project --cwd {ctx.workspace.root}"


def _project_configs(ctx: ExtensionContext) -> list[LoadedConfig]:
    """Project configs that may run: trusted now (by flag or stored fingerprint), or none.
    Untrusted ones are reported once, with the command that trusts them."""
    user_file = user_config_path(ctx.settings.home).resolve()
    root = ctx.workspace.root
    # When the project is $HOME, `.invincat/mcp.json` is the user file; count it once.
    files = [p for p in project_config_paths(root) if p.resolve() != user_file]
    if not files:
        return []
    store = TrustStore(ctx.settings.home / TRUST_FILE)
    if ctx.options.get("trust_project"):
        store.trust(root, files)
    elif not store.is_trusted(root, files):
        configs = [c for c in (load_file(p, "project") for p in files) if c is not None]
        names = sorted({n for c in configs for n in c.servers})
        shown = ", ".join(p.relative_to(root).as_posix() for p in files)
        changed = store.trusted_fingerprint(root) is not None
        ctx.notify(
            f"Project MCP config {shown} was not run: it "
            + ("changed since you trusted it" if changed else "is not trusted yet")
            + (f" (servers: {', '.join(names)})" if names else "")
            + ". Project configs can run any program, so review the file, then start "
            f"`{_trust_command(ctx)}` to trust this version (any later change asks again)."
        )
        return []
    return [c for c in (load_file(p, "project") for p in files) if c is not None]


def _hide_dead_tools(dead: set[str]) -> Any:
    """Middleware that stops offering the tools of servers that died."""
    from langchain.agents.middleware import AgentMiddleware

    class McpToolFilter(AgentMiddleware):
        async def awrap_model_call(
            self,
            request: ModelRequest,
            handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
        ) -> ModelResponse:
            if dead:
                kept = [t for t in request.tools if getattr(t, "name", None) not in dead]
                request = request.override(tools=kept)
            return await handler(request)

    return McpToolFilter()


def _configs(ctx: ExtensionContext) -> list[LoadedConfig]:
    """The user's, the editor's and the trusted project's MCP configs (errors told)."""
    configs: list[LoadedConfig] = []
    user = load_file(user_config_path(ctx.settings.home), "user")
    if user is not None:
        configs.append(user)
    client = ctx.options.get("client_mcp_servers")
    if client:
        # Servers the user's editor passed (ACP session/new): the user's own configuration,
        # trusted like the user file. Values are literal: no ${VAR} is expanded from this
        # process's environment (it holds the model key) into what the editor sent.
        configs.append(load_servers(client, Path("<editor (ACP session/new)>"), "user", {}))
    configs += _project_configs(ctx)
    for config in configs:
        for error in config.errors:
            ctx.notify(error)
    return configs


def _register_tools(
    ctx: ExtensionContext,
    ext: Extensions,
    conn: McpConnection,
    names: list[str],
    taken: set[str],
) -> None:
    """Add `conn`'s tools to the session under unique names (appended to `names`)."""
    from invincat_server.runtime.approvals import Rule
    from invincat_server.runtime.extensions.mcp.tools import build_tool, tool_name

    for tool in conn.tools:
        name = tool_name(conn.name, tool.name, taken)
        names.append(name)
        ext.tools.append(build_tool(conn, tool, name))
        if conn.spec.auto_approves(tool.name):
            # A session rule, exactly like "approve always (session)": the config file
            # is the user's standing answer for this tool.
            ctx.policy.session_rules.append(Rule(tool=name))


async def mcp_provider(ctx: ExtensionContext, ext: Extensions) -> None:
    """Start the configured MCP servers and add their tools to the session."""
    specs = merge(_configs(ctx))
    if not specs:
        return

    from invincat_server.runtime.extensions.mcp.client import McpConnection, McpServerError

    tool_names: dict[str, list[str]] = {}
    dead: set[str] = set()

    def on_lost(conn: McpConnection, reason: str) -> None:
        dead.update(tool_names.get(conn.name, []))
        ctx.notify(
            f"MCP server '{conn.name}' stopped: {reason}. Its tools are unavailable for the "
            "rest of this session; restart invincat to reconnect."
        )

    log_dir = ctx.settings.home / "logs"
    conns = [
        McpConnection(spec, cwd=ctx.workspace.root, log_dir=log_dir, on_lost=on_lost)
        for spec in specs.values()
    ]
    outcomes = await asyncio.gather(*(c.start() for c in conns), return_exceptions=True)
    started: list[McpConnection] = []
    for conn, outcome in zip(conns, outcomes, strict=True):
        if isinstance(outcome, McpServerError):
            ctx.notify(str(outcome) + ". The session continues without it.")
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            started.append(conn)

    async def close_all() -> None:
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    ext.closers.append(close_all)
    if not started:
        return

    taken = {t.name for t in ctx.core_tools} | {t.name for t in ext.tools}
    summary = []
    for conn in started:
        names = tool_names.setdefault(conn.name, [])
        _register_tools(ctx, ext, conn, names, taken)
        if not conn.alive:  # died while we were registering its tools
            dead.update(names)
        summary.append(f"{conn.name} ({len(names)} tools)")
    ext.middleware.append(_hide_dead_tools(dead))
    ext.prompt_sections.append(
        "MCP servers connected: "
        + ", ".join(summary)
        + ". Their tools are named `<server>__<tool>`; the user approves each call unless "
        "they auto-approved it."
    )
    log.info("MCP servers started: %s", ", ".join(summary))
