"""`invincat/threads/delete` and `invincat/threads/prune`, and history after the
checkpoints a turn superseded were pruned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient, start_client, stop_client

TIMEOUT = 90


async def _error(client: InvincatClient, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await client.request(method, params, timeout=TIMEOUT)
    return caught.value


async def _thread_ids(client: InvincatClient) -> set[str]:
    listed = await client.request("invincat/threads/list", {}, timeout=TIMEOUT)
    return {t["threadId"] for t in listed["threads"]}


async def test_history_survives_pruning_and_threads_are_deleted_only_when_asked_right(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    for n in (1, 2):
        (workspace / f"f{n}.txt").write_text(f"contents-of-{n}\n" * 200)
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "f1.txt"}}]},
            {"content": "Read one."},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "f2.txt"}}]},
            {"content": "Read two."},
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "w.txt", "content": "W"}}
                ]
            },
        ]
    )
    first = await start_client(invincat_env, workspace, editor)
    try:
        ref = await first.chat("read one")
        await first.turn_end(ref["turnId"], timeout=TIMEOUT)
        ref2 = await first.chat("read two", threadId=ref["threadId"])
        await first.turn_end(ref2["turnId"], timeout=TIMEOUT)
        read_thread = ref["threadId"]
        waiting = await first.chat("write w")
        await first.wait_event("approval_requested", timeout=TIMEOUT)

        # Both turns' tool results are in the history although older checkpoints are gone.
        history = await first.request(
            "invincat/threads/history", {"threadId": read_thread}, timeout=TIMEOUT
        )
        text = str(history["messages"])
        assert "contents-of-1" in text and "contents-of-2" in text
        assert "Read one." in text and "Read two." in text

        error = await _error(first, "invincat/threads/delete", {"threadId": "t_nope"})
        assert error.code == -32011 and "Unknown thread 't_nope'" in error.message
        error = await _error(first, "invincat/threads/delete", {"threadId": waiting["threadId"]})
        assert error.code == -32012  # its turn is running (waiting for the approval)
        error = await _error(first, "invincat/threads/prune", {"olderThanDays": "old"})
        assert error.code == -32602 and "`olderThanDays` must be a number" in error.message

        preview = await first.request(
            "invincat/threads/prune", {"olderThanDays": 0, "dryRun": True}, timeout=TIMEOUT
        )
        assert [t["threadId"] for t in preview["deleted"]] == [read_thread]
        assert [k["thread"]["threadId"] for k in preview["kept"]] == [waiting["threadId"]]
        assert await _thread_ids(first) == {read_thread, waiting["threadId"]}
        pruned = await first.request(
            "invincat/threads/prune", {"olderThanDays": 0}, timeout=TIMEOUT
        )
        assert [t["threadId"] for t in pruned["deleted"]] == [read_thread]
        assert await _thread_ids(first) == {waiting["threadId"]}
    finally:
        await stop_client(first)

    # A new server: the approval is pending with no live turn.
    second = await start_client(invincat_env, workspace, editor)
    try:
        error = await _error(second, "invincat/threads/delete", {"threadId": waiting["threadId"]})
        assert error.code == -32013 and "waiting for a decision" in error.message
        pending = await second.request("invincat/pendingApprovals", {}, timeout=TIMEOUT)
        assert len(pending["approvals"]) == 1
        deleted = await second.request(
            "invincat/threads/delete",
            {"threadId": waiting["threadId"], "discardPending": True},
            timeout=TIMEOUT,
        )
        assert deleted == {"threadId": waiting["threadId"], "deleted": True}
        assert await _thread_ids(second) == set()
        assert (await second.request("invincat/pendingApprovals", {}))["approvals"] == []
        assert not (workspace / "w.txt").exists()
    finally:
        await stop_client(second)
