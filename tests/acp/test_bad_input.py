"""Malformed input gets a JSON-RPC error and the agent keeps serving."""

from __future__ import annotations

import json
from pathlib import Path

from acp import PROTOCOL_VERSION, text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import ScriptedClient, acp_agent, capabilities


def _error_for(client: ScriptedClient, request_id: object) -> dict | None:
    for message in client.incoming:
        if "error" in message and message.get("id") == request_id:
            return message["error"]
    return None


async def test_non_object_lines_and_bad_params_do_not_stop_the_agent(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "still here"}])
    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        for line in (b"42\n", b"[]\n", b'"text"\n', b"{not json\n"):
            process.stdin.write(line)
        bad_params = {"jsonrpc": "2.0", "id": "bad-1", "method": "session/prompt", "params": {}}
        bad_id = {"jsonrpc": "2.0", "id": [1], "method": "session/new", "params": {}}
        unknown = {"jsonrpc": "2.0", "id": "bad-2", "method": "session/nope", "params": {}}
        for message in (bad_params, bad_id, unknown):
            process.stdin.write(json.dumps(message).encode() + b"\n")
        await process.stdin.drain()

        errors = await client.wait_for(
            lambda: (
                len([m for m in client.incoming if m.get("id") is None and "error" in m]) >= 5
                and _error_for(client, "bad-1")
                and _error_for(client, "bad-2")
            )
        )
        assert errors
        nulls = [m["error"]["code"] for m in client.incoming if m.get("id") is None]
        assert nulls.count(-32600) == 4 and nulls.count(-32700) == 1
        assert _error_for(client, "bad-1")["code"] == -32602
        assert _error_for(client, "bad-2")["code"] == -32601

        # The reader is still alive: a normal session and prompt work.
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert answer.stop_reason == "end_turn"
        assert client.text() == "still here"


async def test_unknown_session_and_relative_cwd_are_clear_errors(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    from acp import RequestError

    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        try:
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
        except RequestError as exc:
            assert exc.code == -32602 and "absolute" in str(exc)
        else:
            raise AssertionError("a relative cwd was accepted")
        try:
            await conn.prompt(session_id="t_nope", prompt=[text_block("hi")])
        except RequestError as exc:
            assert "session/new" in str(exc)
        else:
            raise AssertionError("an unknown session was accepted")
