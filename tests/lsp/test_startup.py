"""Start-up: what an editor can do while the agent stack still loads, and the readiness
signal (`invincat/status`, `invincat/statusChanged`).

The stack import is made deterministically slow with the test-only
`INVINCAT_TEST_STACK_DELAY` (lsp/host.py): the server must answer the project-data
requests (memory, thread list and history, pending approvals) from data an earlier
process saved, before any of LangChain, LangGraph or the OpenAI SDK is imported.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from invincat_server.lsp.host import STACK_DELAY_ENV
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import file_uri, start_client, stop_client, wait_until

NEVER = "600"
"""A stack import that does not finish within the test (the delay ends at shutdown)."""

REMEMBERED = "Release builds are signed with the key in vault/release"
CITED = "Tags are pushed only after the changelog entry is merged"

# These tests hold the stack import back in the server process itself: the process of a
# first editor window. (Later windows are forked by the warm server with the stack already
# imported, tests/lsp/test_warm_stdio.py.)
COLD = {"INVINCAT_WARM": "0"}


def _remember(content: str) -> dict[str, Any]:
    return {
        "op": "create",
        "scope": "project",
        "section": "Releases",
        "content": content,
        "confidence": "high",
        "score": 85,
        "score_reason": "the user asked to remember it",
    }


def _cited(content: str) -> dict[str, Any]:
    """An entry citing RELEASING.md line 2 (its reads need the staleness check)."""
    cited = _remember(content) | {"section": "Signing"}
    return cited | {"citations": [{"path": "RELEASING.md", "start_line": 2, "end_line": 2}]}


def _server_maps() -> list[str]:
    """The memory maps of this test's `invincat --stdio` child processes (Linux /proc):
    which shared libraries, pydantic's compiled core among them, each has loaded."""
    found = []
    for children in Path("/proc/self/task").glob("*/children"):
        for pid in children.read_text().split():
            if b"--stdio" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(Path(f"/proc/{pid}/maps").read_text())
    assert found, "no invincat --stdio child process"
    return found


async def _seed(
    fake_openai: FakeOpenAIServer, env: dict[str, str], workspace: Path, editor: str
) -> dict[str, Any]:
    """A first server saves a finished thread with a tool call, a thread waiting for an
    edit approval and two memory entries, the second citing a file; what it answered for
    each is returned."""
    (workspace / "notes.txt").write_text("alpha\n")
    (workspace / "RELEASING.md").write_text("# Releasing\nsign with vault/release\n")
    read = {"path": "notes.txt"}
    edit = {"path": "notes.txt", "old_string": "alpha", "new_string": "beta"}
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": read}]},
            {"content": "The notes say alpha."},
            {"tool_calls": [{"name": "edit_file", "arguments": edit}]},
        ]
    )
    first = await start_client(env, workspace, editor)
    try:
        done = await first.chat("what do the notes say?", wait=True)
        assert done["status"] == "completed"
        waiting = await first.chat("change alpha to beta")
        await first.wait_event("approval_requested")
        await first.request(
            "invincat/memory/apply",
            {"scope": "project", "operations": [_remember(REMEMBERED), _cited(CITED)]},
        )
        return {
            "thread": done["threadId"],
            "waiting": waiting["threadId"],
            "history": await first.request(
                "invincat/threads/history", {"threadId": done["threadId"]}
            ),
            "waiting_history": await first.request(
                "invincat/threads/history", {"threadId": waiting["threadId"]}
            ),
            "threads": await first.request("invincat/threads/list", {}),
            "pending": await first.request("invincat/pendingApprovals", {}),
            "memory": await first.request("invincat/memory/list", {}),
            "memory_log": await first.request("invincat/memory/log", {}),
        }
    finally:
        await stop_client(first)


async def test_saved_data_is_served_while_the_agent_stack_is_still_loading(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    saved = await _seed(fake_openai, invincat_env, workspace, editor)
    assert saved["pending"]["approvals"] and saved["memory"]["items"]
    assert any(m.get("tool_calls") for m in saved["history"]["messages"])

    slow = await start_client({**invincat_env, **COLD, STACK_DELAY_ENV: NEVER}, workspace, editor)
    try:
        # What an editor asks for as its window opens, all at once.
        entry_id = saved["memory"]["items"][0]["id"]
        memory, shown, log, threads, history, waiting_history, pending = await asyncio.gather(
            slow.request("invincat/memory/list", {}),
            slow.request("invincat/memory/show", {"id": entry_id}),
            slow.request("invincat/memory/log", {}),
            slow.request("invincat/threads/list", {}),
            slow.request("invincat/threads/history", {"threadId": saved["thread"]}),
            slow.request("invincat/threads/history", {"threadId": saved["waiting"]}),
            slow.request("invincat/pendingApprovals", {}),
        )
        status = await slow.request("invincat/debug/status")
        assert status["stackLoaded"] is False and status["sessionOpen"] is False
        assert (await slow.request("invincat/status"))["state"] == "starting"
        # The memory views came from the quick reader: the memory package's pydantic
        # models (and pydantic itself) are not even loaded (issue 15), also for an entry
        # with citations, whose verdict the reader checks itself.
        cited = await slow.request("invincat/memory/show", {"id": memory["items"][1]["id"]})
        (workspace / "RELEASING.md").write_text("# Releasing\nsign with anything\n")
        stale = await slow.request("invincat/memory/list", {})
        assert not any("pydantic_core" in maps for maps in _server_maps()), "pydantic loaded"
        assert memory == saved["memory"]
        assert shown["entry"] == memory["items"][0] and shown["history"] == log["records"]
        assert log == saved["memory_log"]
        assert cited["entry"] == memory["items"][1] and cited["history"] == log["records"]
        assert memory["items"][1]["verification"]["state"] == "fresh"
        assert [i["stale"] for i in stale["items"]] == [False, True]
        assert stale["items"][1]["verification"]["citations"][0]["state"] == "changed"

        assert threads == saved["threads"]
        assert history == saved["history"]  # the stack's decoder and the light one agree
        assert waiting_history == saved["waiting_history"]
        assert pending == saved["pending"]
        assert [i["id"] for i in memory["items"]] == [i["id"] for i in saved["memory"]["items"]]
        assert memory["items"][0]["content"] == REMEMBERED
    finally:
        await stop_client(slow)


async def test_status_goes_from_starting_to_ready_with_timings(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    client = await start_client(invincat_env, workspace, editor)
    try:
        await wait_until(lambda: any(s["state"] == "ready" for s in client.status_changes))
        assert [s["state"] for s in client.status_changes] == ["starting", "ready"]
        status = await client.request("invincat/status")
        assert status == client.status_changes[-1]
        timings = status["timings"]
        assert all(timings[k] > 0 for k in ("initializeMs", "stackImportMs", "sessionOpenMs"))
        assert timings["sessionOpenMs"] >= timings["stackImportMs"]
        fake_openai.add_steps([{"content": "ready and working"}])
        assert (await client.chat("hi", wait=True))["status"] == "completed"
    finally:
        await stop_client(client)


async def test_a_session_that_cannot_open_reports_failed_and_memory_still_works(
    invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    env = {k: v for k, v in invincat_env.items() if k != "OPENAI_API_KEY"}
    client = await start_client(env, workspace, editor)
    try:
        await wait_until(lambda: any(s["state"] == "failed" for s in client.status_changes))
        assert [s["state"] for s in client.status_changes] == ["starting", "failed"]
        failed = await client.request("invincat/status")
        assert "OPENAI_API_KEY is not set" in failed["message"]
        assert failed["timings"]["sessionOpenMs"] is None
        assert (await client.request("invincat/memory/list", {}))["items"] == []
        assert (await client.request("invincat/threads/list", {}))["threads"] == []
    finally:
        await stop_client(client)


async def test_memory_applied_while_opening_is_what_the_first_chat_sees(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    # Long enough that the apply surely lands first, short enough to chat afterwards.
    client = await start_client({**invincat_env, **COLD, STACK_DELAY_ENV: "8"}, workspace, editor)
    try:
        applied = await client.request(
            "invincat/memory/apply", {"scope": "project", "operations": [_remember(REMEMBERED)]}
        )
        assert applied["applied"] and not applied["rejected"]
        assert (await client.request("invincat/debug/status"))["sessionOpen"] is False
        assert await client.memory_change(1) == {
            "scope": "project",
            "batchId": applied["batch_id"],
            "folder": file_uri(workspace),
        }

        fake_openai.add_steps([{"content": "Noted."}])
        assert (await client.chat("how are releases signed?", wait=True))["status"] == "completed"
        [request] = fake_openai.chat_requests()
        assert REMEMBERED in str(request["messages"])
        # One writer: the session's service is the one the sidebar used (no second
        # announcement of the same batch from a second store watcher).
        listed = await client.request("invincat/memory/list", {})
        assert [i["content"] for i in listed["items"]] == [REMEMBERED]
        assert len(client.memory_changes) == 1
    finally:
        await stop_client(client)


async def test_a_cited_entry_follows_its_file_while_the_stack_loads(
    invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    """An entry applied in this session: its verdict follows the cited file (the quick
    reader's checker, cached by stat, sees the edit) without waiting for the agent stack."""
    (workspace / "RELEASING.md").write_text("# Releasing\nsign with vault/release\n")
    cited = _cited(REMEMBERED)
    client = await start_client({**invincat_env, **COLD, STACK_DELAY_ENV: NEVER}, workspace, editor)
    try:
        applied = await client.request(
            "invincat/memory/apply", {"scope": "project", "operations": [cited]}
        )
        assert applied["applied"] and not applied["rejected"], applied
        [item] = (await client.request("invincat/memory/list", {}))["items"]
        assert item["stale"] is False and item["verification"]["state"] == "fresh"
        (workspace / "RELEASING.md").write_text("# Releasing\nsign with anything\n")
        [item] = (await client.request("invincat/memory/list", {}))["items"]
        assert item["stale"] is True
        assert (await client.request("invincat/debug/status"))["stackLoaded"] is False
    finally:
        await stop_client(client)
