"""session/prompt's embedded resources and resource links go through the core's
editor-context path, as the language server's `context` does: confined to the workspace
(a link to /etc/passwd or a symlink out of the project is refused with a note and not
read), capped, redacted, and `@path` mentions in the text attach files too."""

from __future__ import annotations

from pathlib import Path

from acp import embedded_text_resource, resource_block, resource_link_block, text_block
from acp.schema import BlobResourceContents, EmbeddedResourceContentBlock, ImageContentBlock

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.conftest import Agent

SECRET = "sk-proj-" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa98765"


def _sent(fake_openai: FakeOpenAIServer) -> str:
    return str(fake_openai.chat_requests()[-1]["messages"][-1]["content"])


async def test_attachments_are_capped_redacted_and_mentions_attach_files(
    agent: Agent, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Seen."}])
    (workspace / "README.md").write_text("# The project\n")
    (workspace / "notes.md").write_text("mentioned notes\n")
    big = "".join(f"line {i} " + "x" * 60 + "\n" for i in range(2000))
    answer = await agent.conn.prompt(
        session_id=agent.session_id,
        prompt=[
            text_block("review this and @notes.md"),
            resource_block(
                embedded_text_resource(
                    f"file://{workspace}/app.py", f"token = '{SECRET}'\nprint('unsaved')\n"
                )
            ),
            resource_block(embedded_text_resource(f"file://{workspace}/big.py#L10:2009", big)),
            resource_link_block(name="README.md", uri=f"file://{workspace}/README.md"),
        ],
    )
    assert answer.stop_reason == "end_turn"
    sent = _sent(fake_openai)
    assert sent.startswith("review this and @notes.md\n\n<editor_context>")
    assert "Attached app.py:\n```python\n     1\ttoken = '" in sent
    assert SECRET not in sent  # redacted like the language server's context
    assert "print('unsaved')" in sent  # the client's text, not the disk (no app.py there)
    assert "Attached big.py, lines 10-2009:\n```python\n    10\tline 0 x" in sent
    assert "more lines not shown]" in sent and "line 1999 " not in sent  # capped
    assert "Attached README.md:\n```markdown\n     1\t# The project" in sent  # the link, read
    assert "File notes.md (mentioned as @):" in sent and "mentioned notes" in sent


async def test_attachments_outside_the_project_are_refused_with_a_note_not_read(
    agent: Agent, fake_openai: FakeOpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    fake_openai.add_steps([{"content": "Only the note."}])
    outside = tmp_path / "private.txt"
    outside.write_text("PRIVATE-OUTSIDE-TEXT\n")
    (workspace / "escape.txt").symlink_to(outside)
    (workspace / "ok.txt").write_text("inside text\n")
    answer = await agent.conn.prompt(
        session_id=agent.session_id,
        prompt=[
            text_block("look"),
            resource_link_block(name="passwd", uri="file:///etc/passwd"),
            resource_link_block(name="escape", uri=f"file://{workspace}/escape.txt"),
            resource_block(embedded_text_resource(f"file://{outside}", "EMBEDDED-OUTSIDE-TEXT\n")),
            resource_link_block(name="web", uri="https://example.com/x"),
            resource_link_block(name="nul", uri=f"file://{workspace}/a\x00b.txt"),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=BlobResourceContents(
                    uri=f"file://{workspace}/logo.png", blob="iVBORw0KGgo="
                ),
            ),
            ImageContentBlock(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
            resource_link_block(name="ok", uri=f"file://{workspace}/ok.txt"),
        ],
    )
    assert answer.stop_reason == "end_turn"  # each bad item costs that item only
    sent = _sent(fake_openai)
    assert "root:" not in sent and "PRIVATE-OUTSIDE-TEXT" not in sent
    assert "EMBEDDED-OUTSIDE-TEXT" not in sent
    assert "Attachment file:///etc/passwd was not attached: " in sent
    assert f"Attachment file://{workspace}/escape.txt was not attached: " in sent
    assert "outside the workspace" in sent
    assert "https://example.com/x was not attached: only file: URIs" in sent
    assert "NUL byte" in sent
    assert "logo.png was not attached: binary content is not included." in sent
    assert "attachments of type image are not supported" in sent
    assert "Attached ok.txt:" in sent and "inside text" in sent
    # The user is told too, not only the model.
    assert "**Error:** Attachment file:///etc/passwd was not attached" in agent.client.text()


async def test_a_protected_file_is_not_attached(
    agent: Agent, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "ok"}])
    # A memory store is protected like for the file tools (the session's deny hook).
    memory = workspace / ".invincat" / "memory_project.json"
    memory.parent.mkdir(exist_ok=True)
    memory.write_text('{"entries": [{"content": "PROTECTED-MEMORY"}]}\n')
    await agent.conn.prompt(
        session_id=agent.session_id,
        prompt=[text_block("see"), resource_link_block(name="m", uri=f"file://{memory}")],
    )
    sent = _sent(fake_openai)
    assert "PROTECTED-MEMORY" not in sent and "protected memory data" in sent


async def test_a_malformed_block_is_a_clear_error_and_the_session_stays_usable(
    agent: Agent, fake_openai: FakeOpenAIServer
) -> None:
    import json

    fake_openai.add_steps([{"content": "still here"}])
    bad_blocks = [
        {"type": "resource_link"},
        {"type": "resource_link", "uri": None, "name": "x"},
        {"type": "resource", "resource": {"uri": 5, "text": "x"}},
        {"type": "text", "text": 5},
    ]
    for index, block in enumerate(bad_blocks):
        message = {
            "jsonrpc": "2.0",
            "id": f"bad-{index}",
            "method": "session/prompt",
            "params": {"sessionId": agent.session_id, "prompt": [text_block("hi"), block]},
        }
        agent.process.stdin.write(json.dumps(message, default=str).encode() + b"\n")
    await agent.process.stdin.drain()

    def errors() -> list[dict]:
        return [m["error"] for m in agent.client.incoming if str(m.get("id")).startswith("bad-")]

    await agent.client.wait_for(lambda: len(errors()) == len(bad_blocks))
    assert {error["code"] for error in errors()} == {-32602}
    assert fake_openai.chat_requests() == []  # nothing ran
    answer = await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block("hi")])
    assert answer.stop_reason == "end_turn" and agent.client.text() == "still here"
