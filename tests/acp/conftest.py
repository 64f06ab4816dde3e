"""ACP end-to-end tests: the real `invincat --acp` process, driven through the SDK's client
side, against the scripted fake model over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION

from tests.acp.client import ScriptedClient, acp_agent, capabilities


class Agent:
    """A started agent with one session: `conn`, `client`, `session_id`, `process`."""

    def __init__(self, conn: Any, process: Any, client: ScriptedClient, session_id: str) -> None:
        self.conn = conn
        self.process = process
        self.client = client
        self.session_id = session_id


@pytest.fixture
def fs_capable() -> bool:
    """Whether the client offers fs/read_text_file and fs/write_text_file."""
    return False


@pytest.fixture
async def agent(
    invincat_env: dict[str, str], workspace: Path, fs_capable: bool
) -> AsyncIterator[Agent]:
    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities(fs=fs_capable)
        )
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        yield Agent(conn, process, client, session.session_id)
