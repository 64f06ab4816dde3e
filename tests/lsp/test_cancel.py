"""Cancelling a turn while its shell command runs, three ways; the thread goes on after."""

from __future__ import annotations

import itertools

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from invincat_server.runtime.agents.history_repair import INTERRUPTED_NOTE
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.lsp.client import InvincatClient, wait_until
from tests.terminal.cli_process import process_running

_markers = itertools.count()


@pytest.mark.parametrize("how", ["invincat/cancel", "$/cancelRequest", "progress"])
async def test_cancelling_a_running_command_stops_it_and_the_thread_goes_on(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, how: str
) -> None:
    # A distinct duration per run names the process, so we can watch it come and go. It
    # outlasts the wait for its death by far, so a leaked command cannot pass by ending.
    marker = f"sleep {DEADLINE * 4:.0f}.{next(_markers)}{abs(hash(how)) % 1000}"
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": marker}}]},
            {"content": "Still here after the cancel."},
        ]
    )
    params = {"prompt": "run the long command", "wait": how == "$/cancelRequest"}
    waiting = lsp.protocol.send_raw("invincat/chat", params, msg_id="chat-1")
    asked = await lsp.wait_event("approval_requested")
    turn_id, thread_id = asked["turnId"], asked["threadId"]
    assert await lsp.resolve(asked["event"]["approval_id"], "approve") == {"resolved": True}
    await wait_until(lambda: process_running(marker), what="the command to start")

    if how == "invincat/cancel":
        assert await lsp.request("invincat/cancel", {"turnId": turn_id}) == {"cancelled": True}
    elif how == "$/cancelRequest":
        lsp.cancel_request(types.CancelParams(id="chat-1"))
        with pytest.raises(JsonRpcRequestCancelled):
            await waiting
    else:
        token = f"invincat-turn-{turn_id}"
        assert token in lsp.progress_reports
        lsp.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))

    assert (await lsp.turn_end(turn_id))["status"] == "cancelled"
    await wait_until(lambda: not process_running(marker), what="the command to die")
    if how != "$/cancelRequest":
        assert set(await waiting) == {"threadId", "turnId"}

    again = await lsp.chat("are you still there?", threadId=thread_id)
    assert (await lsp.turn_end(again["turnId"]))["status"] == "completed"
    # The next model call saw the interrupted call answered, not an orphan tool call.
    messages = fake_openai.chat_requests()[-1]["messages"]
    assert [m["content"] for m in messages if m["role"] == "tool"] == [INTERRUPTED_NOTE]
    assert messages[-1] == {"role": "user", "content": "are you still there?"}
    assert await lsp.request("invincat/cancel", {"turnId": turn_id}) == {"cancelled": False}
