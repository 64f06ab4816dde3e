"""`invincat/offload` over LSP: older turns leave the model's context; refusals say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient


async def _offload_error(lsp: InvincatClient, thread_id: str) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await lsp.request("invincat/offload", {"threadId": thread_id})
    return caught.value


async def test_offload_returns_the_report_and_the_next_request_is_smaller(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("".join(f"note {i}\n" for i in range(200)))
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"content": "Read the notes."},
            {"content": "Before offload."},
            {"content": "After offload."},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}
                ]
            },
        ]
    )
    first = await lsp.chat("read notes.txt", wait=True)
    thread_id = first["threadId"]
    await lsp.chat("second question", threadId=thread_id, wait=True)
    before = fake_openai.chat_requests()[-1]["messages"]

    report = await lsp.request("invincat/offload", {"threadId": thread_id})
    assert report["threadId"] == thread_id and report["offloadedMessages"] >= 4
    assert report["tokensAfter"] < report["tokensBefore"]
    assert report["file"] == str(workspace.resolve() / ".invincat" / "offload" / f"{thread_id}.md")
    assert "note 199" in Path(report["file"]).read_text()

    await lsp.chat("third question", threadId=thread_id, wait=True)
    after = fake_openai.chat_requests()[-1]["messages"]
    assert len(json.dumps(after)) < len(json.dumps(before))
    assert after[-1] == {"role": "user", "content": "third question"}

    error = await _offload_error(lsp, "t_nope")
    assert error.code == -32011 and "Unknown thread 't_nope'" in error.message
    # A turn waiting for an approval keeps its thread busy.
    busy = await lsp.chat("write a.txt", threadId=thread_id)
    await lsp.wait_event("approval_requested")
    error = await _offload_error(lsp, thread_id)
    assert error.code == -32012 and "wait for it or cancel it first" in error.message
    assert (await lsp.request("invincat/cancel", {"turnId": busy["turnId"]}))["cancelled"]
    assert (await lsp.turn_end(busy["turnId"]))["status"] == "cancelled"
