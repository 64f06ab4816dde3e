"""session/load: history replayed as updates; a permission pending when the process died
is asked again, and answering it resumes the turn."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from acp import PROTOCOL_VERSION, text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import ScriptedClient, acp_agent, capabilities


async def test_restart_and_load_asks_the_pending_permission_again(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"content": "Sure."},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "n.txt", "content": "hi\n"}}
                ]
            },
            {"content": "Wrote n.txt after the restart."},
        ]
    )
    first = ScriptedClient()
    async with acp_agent(invincat_env, workspace, first) as (conn, process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities(fs=False)
        )
        session_id = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("say hi")])
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=session_id, prompt=[text_block("write n.txt")])
        )
        await first.wait_for(lambda: first.permission_requests)
        process.kill()  # the editor crashed, or the machine rebooted
        await process.wait()
        with contextlib.suppress(Exception):
            await prompt
    assert not (workspace / "n.txt").exists()

    second = ScriptedClient()
    async with acp_agent(invincat_env, workspace, second) as (conn, _process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities(fs=False)
        )
        response = await conn.load_session(
            cwd=str(workspace), session_id=session_id, mcp_servers=[]
        )
        assert response.modes.current_mode_id == "agent"
        # History arrived before the answer to session/load.
        users = [u.content.text for u in second.of_kind("user_message_chunk")]
        assert users == ["say hi", "write n.txt"]
        assert second.text() == "Sure."
        [call] = second.of_kind("tool_call")
        assert call.kind == "edit" and call.title == "Write n.txt"
        assert call.status == "pending"  # its permission is asked again, not shown cancelled
        assert not second.of_kind("tool_call_update")

        await second.wait_for(lambda: second.permission_requests)
        [asked] = second.permission_requests
        assert asked["tool_call"].title == "Write n.txt"
        await second.answers.put("allow_once")
        await second.wait_for(lambda: "after the restart" in second.text())
        assert (workspace / "n.txt").read_text() == "hi\n"


async def test_loading_an_unknown_session_is_a_clear_error(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    from acp import RequestError

    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, _process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities(fs=False)
        )
        try:
            await conn.load_session(cwd=str(workspace), session_id="t_missing", mcp_servers=[])
        except RequestError as exc:
            assert "Unknown session" in str(exc)
        else:
            raise AssertionError("loading an unknown session succeeded")
