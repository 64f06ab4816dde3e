"""A pending approval survives a restart of the server and is resolved by the next one."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import file_uri, start_client, stop_client, wait_until


async def test_a_pending_approval_survives_a_restart_and_resolving_it_completes_the_turn(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    target = workspace / "config.ini"
    target.write_text("[main]\nmode = slow\n")  # not open in the editor: edits go to disk
    edit = {"path": "config.ini", "old_string": "mode = slow", "new_string": "mode = fast"}
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "edit_file", "arguments": edit}]},
            {"content": "Switched to fast mode after the restart."},
        ]
    )
    first = await start_client(invincat_env, workspace, editor)
    try:
        ref = await first.chat("make it fast")
        asked = (await first.wait_event("approval_requested"))["event"]
    finally:
        await stop_client(first)  # the editor closes with the approval still pending
    assert target.read_text() == "[main]\nmode = slow\n"

    second = await start_client(invincat_env, workspace, editor)
    try:
        # The restarted server shows the pending edit where it applies...
        uri = file_uri(target)
        [diagnostic] = await wait_until(lambda: second.diagnostics.get(uri), what="diagnostics")
        assert diagnostic.range.start.line == 1 and diagnostic.source == "invincat"
        # ...and lists it.
        pending = await second.request("invincat/pendingApprovals", {})
        assert [a["approval_id"] for a in pending["approvals"]] == [asked["approval_id"]]
        assert pending["approvals"][0]["diff"] == asked["diff"]

        resolved = await second.resolve(asked["approval_id"], "approve")
        assert resolved["resolved"] is True and resolved["threadId"] == ref["threadId"]
        end = await second.turn_end(resolved["turnId"])
        assert end["status"] == "completed"
        kinds = [e["type"] for e in second.turn_events(resolved["turnId"])]
        assert kinds[:2] == ["turn_start", "approval_resolved"] and "tool_result" in kinds
        deltas = [e.get("text", "") for e in second.turn_events(resolved["turnId"])]
        assert "".join(deltas) == "Switched to fast mode after the restart."
        assert target.read_text() == "[main]\nmode = fast\n"
        await wait_until(lambda: len(second.diagnostics[uri]) == 0, what="diagnostics cleared")
        assert (await second.request("invincat/pendingApprovals", {}))["approvals"] == []
    finally:
        await stop_client(second)


async def test_after_a_restart_reject_always_answers_its_batch_and_resumes_the_turn(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    # No turn of the restarted server waits: the one decision decides the whole batch (the
    # rule covers the other `rm`), so it resumes the turn, which reports both decisions.
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text("keep\n")
    calls = [
        {"name": "execute", "arguments": {"command": f"rm {name}"}} for name in ("a.txt", "b.txt")
    ]
    fake_openai.add_steps([{"tool_calls": calls}, {"content": "Nothing removed."}])
    first = await start_client(invincat_env, workspace, editor)
    try:
        await first.chat("remove both")
        await wait_until(
            lambda: (
                len([e for e in first.events if e["event"]["type"] == "approval_requested"]) >= 2
            ),
            what="both approvals",
        )
    finally:
        await stop_client(first)

    second = await start_client(invincat_env, workspace, editor)
    try:
        pending = (await second.request("invincat/pendingApprovals", {}))["approvals"]
        assert len(pending) == 2
        resolved = await second.resolve(pending[0]["approval_id"], "reject_always")
        assert resolved["resolved"] is True and "turnId" in resolved
        assert (await second.turn_end(resolved["turnId"]))["status"] == "completed"
        events = second.turn_events(resolved["turnId"])
        assert [(e["approval_id"], e["decision"]) for e in events[1:3]] == [
            (pending[0]["approval_id"], "reject_always (session)"),
            (pending[1]["approval_id"], "reject"),
        ]
        assert [e["status"] for e in events if e["type"] == "tool_result"] == [
            "rejected",
            "rejected",
        ]
        assert (await second.request("invincat/pendingApprovals", {}))["approvals"] == []
    finally:
        await stop_client(second)
    assert all((workspace / name).read_text() == "keep\n" for name in ("a.txt", "b.txt"))
