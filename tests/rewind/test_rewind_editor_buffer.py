"""An edit the editor's buffer took (workspace/applyEdit through the language server) is
checkpointed with the text the editor showed before it, unsaved text included; once
saved, `invincat rewind` asks before overwriting it (Invincat never saw it on disk) and,
confirmed, gives the editor's earlier text back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient, start_client, stop_client
from tests.terminal.cli_process import run_invincat

DISK, BUFFER = "disk line\n", "unsaved line one\nline two\n"


@pytest.fixture
async def lsp(invincat_env: dict[str, str], workspace: Path) -> AsyncIterator[InvincatClient]:
    client = await start_client(invincat_env, workspace, "visual-studio-code")
    yield client
    await stop_client(client)


async def test_a_buffer_edit_rewinds_to_the_text_the_editor_showed(
    lsp: InvincatClient,
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
) -> None:
    (workspace / "notes.txt").write_text(DISK)
    uri = lsp.open_document(workspace / "notes.txt", BUFFER)
    args = {"path": "notes.txt", "old_string": "line two", "new_string": "line 2"}
    fake_openai.add_steps(
        [{"tool_calls": [{"name": "edit_file", "arguments": args}]}, {"content": "Edited."}]
    )
    ref = await lsp.chat("rename line two")
    asked = await lsp.wait_event("approval_requested", where=lambda e: e["turnId"] == ref["turnId"])
    await lsp.resolve(asked["event"]["approval_id"], "approve")
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"
    assert lsp.text(uri) == "unsaved line one\nline 2\n"
    thread = asked["event"]["thread_id"]
    (workspace / "notes.txt").write_text(lsp.text(uri))  # the user saves

    def rewind(*extra: str) -> dict:
        result = run_invincat(
            ["rewind", thread, "--to", "1", "--yes", "--json", *extra], invincat_env
        )
        assert result.code == 0, result.stderr
        return {event["type"]: event for event in result.events}

    kept = await asyncio.to_thread(rewind)
    assert kept["rewind_plan"]["conflicts"] == ["notes.txt"]
    assert (workspace / "notes.txt").read_text() == "unsaved line one\nline 2\n"
    done = await asyncio.to_thread(rewind, "--overwrite", "notes.txt")
    assert done["rewind_done"]["restored"] == ["notes.txt"]
    assert (workspace / "notes.txt").read_text() == BUFFER
