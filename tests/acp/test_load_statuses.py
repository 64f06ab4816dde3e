"""session/load replays each tool call with the status the live session showed: a
rejected write `failed` (not `completed`), a write cancelled at its permission prompt
`failed` as it was sent live when cancelled (not `in_progress` forever), a completed one
`completed`, and one still waiting for its permission (the process died) `pending`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import ScriptedClient, acp_agent, capabilities


def _write(path: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x\n"}}]}


def _statuses(client: ScriptedClient) -> dict[str, str]:
    """The last status each tool call was shown with."""
    shown: dict[str, str] = {}
    for update in client.updates:
        if update.session_update in ("tool_call", "tool_call_update") and update.status:
            shown[update.tool_call_id] = update.status
    return shown


async def _initialize(conn: Any) -> None:
    await conn.initialize(
        protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities(fs=False)
    )


async def test_load_replays_the_statuses_the_live_session_showed(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            _write("done.txt"),
            {"content": "Wrote it."},
            _write("rejected.txt"),
            {"content": "Not written."},
            _write("cancelled.txt"),
        ]
    )
    live = ScriptedClient()
    async with acp_agent(invincat_env, workspace, live) as (conn, _process):
        await _initialize(conn)
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await live.answers.put("allow_once")
        await conn.prompt(session_id=session_id, prompt=[text_block("write done")])
        await live.answers.put("reject_once")
        await conn.prompt(session_id=session_id, prompt=[text_block("write rejected")])
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=session_id, prompt=[text_block("write cancelled")])
        )
        await live.wait_for(lambda: len(live.permission_requests) == 3)
        await conn.cancel(session_id=session_id)
        assert (await prompt).stop_reason == "cancelled"
        await live.answers.put(None)  # lets the scripted client's dropped request end
        # Live, the cancelled call is closed `failed` (it was left `pending` forever).
        await live.wait_for(
            lambda: len(_statuses(live)) == 3 and "pending" not in _statuses(live).values()
        )
        shown_live = _statuses(live)
    assert sorted(shown_live.values()) == ["completed", "failed", "failed"]
    assert not (workspace / "rejected.txt").exists() and not (workspace / "cancelled.txt").exists()

    replay = ScriptedClient()
    async with acp_agent(invincat_env, workspace, replay) as (conn, _process):
        await _initialize(conn)
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        shown = _statuses(replay)
    assert shown == shown_live  # a rejected write was replayed `completed` before
