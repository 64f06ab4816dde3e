"""A small real MCP server for the tests, built with the SDK's server API (MCPServer).

    python mcp_server.py [--name NAME] [--marker FILE] [--http PORT]

Serves stdio by default, streamable HTTP on 127.0.0.1:PORT with `--http`. `--marker`
appends this process's pid to FILE at start, so a test can tell whether it ever ran.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build(name: str) -> MCPServer:
    app = MCPServer(name)

    @app.tool()
    def echo(text: str, times: int = 1) -> str:
        """Repeat the text."""
        return " ".join([text] * times)

    @app.tool()
    def whoami() -> str:
        """The server's process id."""
        return f"pid {os.getpid()}"

    @app.tool()
    def env_value(name: str) -> str:
        """The server's environment variable `name`, or `(unset)`."""
        return os.environ.get(name, "(unset)")

    @app.tool()
    def fail(reason: str) -> str:
        """Always fails (a tool error whose message reaches the client)."""
        raise ToolError(reason)

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="demo")
    parser.add_argument("--marker")
    parser.add_argument("--http", type=int)
    args = parser.parse_args()
    if args.marker:
        with Path(args.marker).open("a") as fh:
            fh.write(f"{os.getpid()}\n")
    app = build(args.name)
    if args.http:
        app.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        app.run()


if __name__ == "__main__":
    main()
