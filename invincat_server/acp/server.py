"""`invincat --acp`: the Agent Client Protocol agent over stdin/stdout.

Stdout carries protocol only: the process's file descriptor 1 is pointed at stderr before
anything runs, so a stray print (ours, a library's, or a child process's inherited
stdout) can never corrupt the JSON-RPC stream; the protocol keeps a private duplicate of
the original stdout. Logs go to stderr (`INVINCAT_LOG_LEVEL`, default INFO).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import IO

from acp import AgentSideConnection

from invincat_server.acp.agent import InvincatAgent
from invincat_server.acp.transport import StdioTransport

log = logging.getLogger("invincat.acp")


def _configure_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    level = os.environ.get("INVINCAT_LOG_LEVEL", "INFO").upper()
    logging.getLogger("invincat").setLevel(getattr(logging, level, logging.INFO))


def _claim_stdout() -> IO[bytes]:
    """A private handle on the real stdout; fd 1 (and sys.stdout) now lead to stderr."""
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return protocol_out


async def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    transport = StdioTransport(stdin, stdout)
    agent = InvincatAgent(transport)
    # `session/close` is still in the SDK's unstable set; the methods of that set we do
    # not implement stay "method not found".
    connection = AgentSideConnection(agent, transport, listening=False, use_unstable_protocol=True)
    try:
        await connection.listen()
    finally:
        await agent.close()
        await connection.close()


def serve() -> int:
    _configure_logging()
    protocol_out = _claim_stdout()
    try:
        asyncio.run(_serve(sys.stdin.buffer, protocol_out))
    except KeyboardInterrupt:
        return 130
    return 0
