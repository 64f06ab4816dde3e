"""Bad requests get JSON-RPC errors a person can act on, and the server keeps serving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient, file_uri


async def _error(lsp: InvincatClient, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await lsp.request(method, params)
    # Whatever went wrong, the next request is served.
    assert (await lsp.request("invincat/threads/list", {}))["threads"] is not None
    return caught.value


async def test_malformed_requests_get_errors_that_say_what_is_wrong(
    lsp: InvincatClient, workspace: Path
) -> None:
    error = await _error(lsp, "invincat/bogus", {})
    assert error.code == -32601 and "Unknown method 'invincat/bogus'" in error.message

    error = await _error(lsp, "invincat/chat", "hello")
    assert error.code == -32602
    assert error.message == "Invalid params for invincat/chat: expected an object, got string."

    error = await _error(lsp, "invincat/chat", {"prompt": 42, "wait": "yes", "mode": "fast"})
    assert error.code == -32602
    assert error.message == (
        "Invalid params for invincat/chat: `prompt` must be a string, got number; "
        "`mode` must be one of 'agent', 'plan', got 'fast'; `wait` must be true or false, "
        "got string."
    )

    error = await _error(lsp, "invincat/resolveApproval", {})
    assert "`approvalId` is required; `decision` is required" in error.message

    # A standard method whose params do not match the LSP types is answered too.
    position = {"line": "first", "character": 0}
    error = await _error(
        lsp,
        "textDocument/codeAction",
        {
            "textDocument": {"uri": file_uri(workspace / "a.txt")},
            "range": {"start": position, "end": position},
            "context": {"diagnostics": []},
        },
    )
    assert error.code == -32602
    assert "textDocument/codeAction" in error.message and "range.start.line" in error.message


async def test_requests_the_session_refuses_say_why(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    error = await _error(lsp, "invincat/chat", {"prompt": "x" * 5_000_000})
    assert error.code == -32602 and "5,000,000 characters; the limit is 1,000,000" in error.message

    error = await _error(lsp, "invincat/chat", {"prompt": "hi", "threadId": "t_nope"})
    assert error.code == -32011 and "Unknown thread 't_nope'" in error.message

    error = await _error(lsp, "invincat/chat", {"prompt": "   "})
    assert error.code == -32013 and "The prompt is empty" in error.message

    unknown = await lsp.resolve("ap_nope", "approve")
    assert unknown == {"resolved": False, "reason": "Unknown approval 'ap_nope'."}

    # A thread waiting for an approval is busy.
    write = {"path": "a.txt", "content": "A\n"}
    fake_openai.add_steps(
        [{"tool_calls": [{"name": "write_file", "arguments": write}]}, {"content": "Done."}]
    )
    ref = await lsp.chat("write a")
    asked = await lsp.wait_event("approval_requested")
    error = await _error(lsp, "invincat/chat", {"prompt": "again", "threadId": ref["threadId"]})
    assert error.code == -32012 and "already running turn" in error.message

    refine = await lsp.resolve(asked["event"]["approval_id"], "refine", feedback="shorter")
    assert refine["resolved"] is False and "refine" in refine["reason"]
    edit = await lsp.resolve(asked["event"]["approval_id"], "edit")
    assert edit["resolved"] is False and "edited_args" in edit["reason"]

    # After all that, the same approval can still be decided and the turn completes.
    assert await lsp.resolve(asked["event"]["approval_id"], "approve") == {"resolved": True}
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"
