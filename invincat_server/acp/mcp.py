"""MCP servers a client passes in `session/new` / `session/load`, as an `mcpServers` mapping
for the runtime (option `client_mcp_servers`), merged with Invincat's own configuration.

stdio and streamable HTTP servers are started; SSE ones are passed on so the runtime
reports that the legacy SSE transport is not supported; an `acp` server (unstable schema)
is skipped with a log line. Every tool of these servers asks before each call, like any
MCP tool: no `autoApprove` can come from the client.
"""

from __future__ import annotations

import logging
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

log = logging.getLogger("invincat.acp.mcp")


def client_servers(servers: list[Any] | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for server in servers or []:
        if isinstance(server, McpServerStdio):
            out[server.name] = {
                "command": server.command,
                "args": list(server.args),
                "env": {v.name: v.value for v in server.env or []},
            }
        elif isinstance(server, HttpMcpServer):
            out[server.name] = {
                "type": "http",
                "url": server.url,
                "headers": {h.name: h.value for h in server.headers or []},
            }
        elif isinstance(server, SseMcpServer):
            out[server.name] = {"type": "sse", "url": server.url}
        else:
            log.warning("skipped MCP server %r: unsupported kind", getattr(server, "name", "?"))
    return out
