"""A thread title made from an ACP prompt (the real `invincat --acp` process): redacted,
then cut, and without control characters — `threads list` prints it to a terminal."""

from __future__ import annotations

from pathlib import Path

from acp import PROTOCOL_VERSION, text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import ScriptedClient, acp_agent, capabilities
from tests.memory.credentials import credentials, leaked, straddlers
from tests.terminal.cli_process import run_invincat


async def test_an_escape_sequence_in_a_prompt_does_not_reach_threads_list(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    [cred] = straddlers(credentials(), 1)
    # Text pasted from a file: clears the screen and retitles the terminal window.
    prompt = f"explain\x1b[2J\x1b]0;pwned\x07 this\x00 {cred.text}"
    fake_openai.add_steps([{"content": "ok"}])
    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block(prompt)])
    for args in (["threads", "list"], ["threads", "list", "--json"]):
        listed = run_invincat(args, invincat_env)
        assert listed.code == 0, listed.stderr
        assert "explain [2J ]0;pwned this [REDACTED:" in listed.stdout, listed.stdout
        assert "\x1b" not in listed.stdout and "\\u001b" not in listed.stdout
        assert "\x07" not in listed.stdout and "\\u0000" not in listed.stdout
        assert leaked(listed.stdout, [cred]) == []
