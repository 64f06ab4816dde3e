"""The instruction files where ACP shows memory: `_invincat/memory/list`'s `instructions`
and the `/memory` command, each apart from the governed entries (`source: AGENTS.md`)."""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.conftest import Agent


async def test_memory_list_and_the_memory_command_show_the_instruction_files(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Run ./scripts/test before pushing.\n")
    (workspace / "GEMINI.md").write_bytes(b"binary\x00rules")

    listed = await agent.conn.ext_method("invincat/memory/list", {"sessionId": agent.session_id})
    answer = await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block("/memory")])

    assert [(i["path"], i["included"], i["skipped"]) for i in listed["instructions"]] == [
        ("AGENTS.md", 35, None),
        ("GEMINI.md", 0, "skipped: it holds a NUL byte (a binary file?)"),
    ]
    assert answer.stop_reason == "end_turn"
    text = agent.client.text()
    assert "remembers nothing yet" in text
    assert "Instruction files (read-only, shown to the model before memory):" in text
    assert "- AGENTS.md (source: AGENTS.md): 35 bytes" in text
    assert "- GEMINI.md (source: GEMINI.md): skipped: it holds a NUL byte" in text
    assert "Run ./scripts/test" not in text  # listed, not quoted
    assert fake_openai.chat_requests() == []
