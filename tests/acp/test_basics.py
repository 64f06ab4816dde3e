"""initialize, session/new, streaming prompts and stop reasons over the real process."""

from __future__ import annotations

from pathlib import Path

from acp import PROTOCOL_VERSION, text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import ScriptedClient, acp_agent, capabilities


async def test_initialize_new_session_and_a_streamed_answer(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Hello from the fake model.", "chunk_size": 5}])
    (workspace / "sub").mkdir()
    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, _process):
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities()
        )
        assert init.protocol_version == 1
        caps = init.agent_capabilities
        assert caps.load_session is True
        assert caps.prompt_capabilities.embedded_context is True
        assert caps.mcp_capabilities.http is True and caps.mcp_capabilities.sse is False
        assert init.agent_info.name == "invincat"

        session = await conn.new_session(cwd=str(workspace / "sub"), mcp_servers=[])
        assert session.modes.current_mode_id == "agent"
        assert {m.id for m in session.modes.available_modes} == {"agent", "plan"}

        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert answer.stop_reason == "end_turn"
        assert client.text() == "Hello from the fake model."
        assert len(client.of_kind("agent_message_chunk")) > 1  # streamed, not one block
        # cwd → project root: the agent works in the folder holding .git
        system = fake_openai.chat_requests()[-1]["messages"][0]["content"]
        assert str(workspace.resolve()) in system
        await client.wait_for(lambda: client.of_kind("available_commands_update"))
        [commands] = client.of_kind("available_commands_update")
        assert {c.name for c in commands.available_commands} >= {"plan", "offload", "memory"}


async def test_a_failed_turn_is_a_clear_error_and_the_session_stays_usable(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    from acp import RequestError

    fake_openai.add_steps([{"fault": "http_500", "times": 3}, {"content": "Recovered."}])
    client = ScriptedClient()
    env = {**invincat_env, "INVINCAT_REQUEST_TIMEOUT": "1"}
    async with acp_agent(env, workspace, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        try:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        except RequestError as exc:
            assert "HTTP 500" in str(exc)
        else:
            raise AssertionError("a failed turn answered normally")
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
        assert answer.stop_reason == "end_turn"
        assert client.text().endswith("Recovered.")


async def test_an_answer_that_is_not_openai_is_named_as_over_the_terminal(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    from acp import RequestError

    body = '{"foo": "bar"}'
    fake_openai.add_steps([{"fault": "raw", "content_type": "application/json", "body": body}])
    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        try:
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        except RequestError as exc:
            message = str(exc)
        else:
            raise AssertionError("a failed turn answered normally")
    assert "did not send an OpenAI-compatible response: HTTP 200" in message, message
    assert 'content type application/json, body starts \'{"foo": "bar"}\'' in message


async def test_resources_links_and_slash_commands(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    from acp import embedded_text_resource, resource_block, resource_link_block

    fake_openai.add_steps([{"content": "Seen."}, {"content": "Second."}])
    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        attached = f"file://{workspace}/app.py"
        await conn.prompt(
            session_id=sid,
            prompt=[
                text_block("review this"),
                resource_block(embedded_text_resource(attached, "print('unsaved')\n")),
                resource_link_block(name="README.md", uri=f"file://{workspace}/README.md"),
            ],
        )
        sent = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
        assert "review this" in sent
        assert "Attached app.py:\n```python\n     1\tprint('unsaved')\n" in sent
        assert "Attachment file://" in sent and "README.md was not attached: no such file" in sent

        await conn.prompt(session_id=sid, prompt=[text_block("and again")])
        requests_before = len(fake_openai.chat_requests())
        answer = await conn.prompt(session_id=sid, prompt=[text_block("/memory")])
        assert answer.stop_reason == "end_turn"
        assert "remembers nothing yet" in client.text()
        answer = await conn.prompt(session_id=sid, prompt=[text_block("/offload")])
        assert answer.stop_reason == "end_turn"
        assert "Offloaded" in client.text()
        assert (workspace / ".invincat" / "offload" / f"{sid}.md").is_file()
        assert len(fake_openai.chat_requests()) == requests_before  # no model call
