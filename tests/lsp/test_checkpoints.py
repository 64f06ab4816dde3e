"""`invincat/checkpoints/list|diff|restore`: rewinding a thread from the editor.

A real turn (the fake model) writes one file, edits another the editor has open (its
buffer takes the edit) and creates a third, which the user then changes by hand. The
list shows the turn; the diff shows every file, the open one diffed from its buffer; the
restore puts the closed file back on disk byte for byte, the open one back through
`workspace/applyEdit` (its disk untouched, the editor's save does the rest), and keeps
the hand-changed file until it is named in `overwrite`. The rewind itself is undoable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient, sent_edits

WRITTEN = b"first line\r\nsecond line\r\n"
OPEN = "alpha\nbeta\ngamma\n"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def _turn_changing_three_files(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> tuple[str, str]:
    """(thread id, uri of the open file) after the turn; every approval approved."""
    (workspace / "written.txt").write_bytes(WRITTEN)
    (workspace / "open.txt").write_text(OPEN)
    uri = lsp.open_document(workspace / "open.txt", OPEN)
    fake_openai.add_steps(
        [
            _call("write_file", path="written.txt", content="rewritten\n"),
            _call("edit_file", path="open.txt", old_string="beta", new_string="BETA"),
            _call("write_file", path="created.txt", content="by the agent\n"),
            {"content": "Done."},
        ]
    )
    ref = await lsp.chat("change three files")
    answered: set[str] = set()
    for _ in range(3):  # one approval per file tool call, asked in turn
        asked = await lsp.wait_event(
            "approval_requested",
            where=lambda e: (
                e["turnId"] == ref["turnId"] and e["event"]["approval_id"] not in answered
            ),
        )
        answered.add(asked["event"]["approval_id"])
        await lsp.resolve(asked["event"]["approval_id"], "approve")
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"
    assert lsp.text(uri) == "alpha\nBETA\ngamma\n"
    assert (workspace / "open.txt").read_text() == OPEN  # the buffer took it, not the disk
    return asked["event"]["thread_id"], uri


async def test_rewind_restores_the_disk_and_the_open_buffer_and_keeps_hand_edits(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    thread, uri = await _turn_changing_three_files(lsp, fake_openai, workspace)
    (workspace / "created.txt").write_text("changed by hand\n")

    listed = await lsp.request("invincat/checkpoints/list", {"threadId": thread})
    assert listed["thread_id"] == thread and listed["rewinds"] == []
    [turn] = listed["turns"]
    assert turn["turn"] == 1 and turn["prompt"] == "change three files"
    assert sorted(turn["files"]) == ["created.txt", "open.txt", "written.txt"]

    plan = await lsp.request("invincat/checkpoints/diff", {"threadId": thread, "toTurn": 1})
    files = {entry["path"]: entry for entry in plan["files"]}
    assert sorted(files) == ["created.txt", "open.txt", "written.txt"]
    assert files["written.txt"]["action"] == "modify" and not files["written.txt"]["in_editor"]
    assert "-rewritten" in files["written.txt"]["diff"]
    # The open file is diffed from what the editor shows.
    assert files["open.txt"]["in_editor"] and "-BETA\n+beta" in files["open.txt"]["diff"]
    assert files["created.txt"]["action"] == "delete"
    # A buffer edit's saved content is not known, and created.txt changed by hand: asked.
    assert plan["conflicts"] == ["created.txt", "open.txt"]
    assert lsp.apply_edit_requests[1:] == []  # the diff changed nothing

    done = await lsp.request(
        "invincat/checkpoints/restore",
        {"threadId": thread, "toTurn": 1, "overwrite": ["open.txt"]},
    )
    assert sorted(done["restored"]) == ["open.txt", "written.txt"]
    assert done["skipped"] == ["created.txt"] and done["failed"] == {}
    assert done["conversation_removed"] is None and isinstance(done["checkpoint"], int)
    assert (workspace / "written.txt").read_bytes() == WRITTEN
    assert (workspace / "created.txt").read_text() == "changed by hand\n"
    # The open file went back through the editor: one more applyEdit, the buffer restored.
    restore_edit = lsp.apply_edit_requests[-1]
    assert uri in sent_edits(restore_edit) and len(lsp.apply_edit_requests) == 2
    assert lsp.text(uri) == OPEN
    assert (workspace / "open.txt").read_text() == OPEN

    # Named, the hand-changed file goes too; the rewinds are recorded and undoable.
    again = await lsp.request(
        "invincat/checkpoints/restore",
        {"threadId": thread, "toTurn": 1, "overwrite": ["created.txt"]},
    )
    assert again["restored"] == ["created.txt"] and not (workspace / "created.txt").exists()
    undone = await lsp.request("invincat/checkpoints/restore", {"threadId": thread, "undo": True})
    assert undone["restored"] == ["created.txt"]
    assert (workspace / "created.txt").read_text() == "changed by hand\n"


async def test_a_refused_buffer_edit_costs_that_file_only(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    thread, uri = await _turn_changing_three_files(lsp, fake_openai, workspace)
    lsp.refuse_apply_edit = "the user said no"
    done = await lsp.request(
        "invincat/checkpoints/restore",
        {"threadId": thread, "toTurn": 1, "overwrite": ["open.txt"]},
    )
    assert sorted(done["restored"]) == ["created.txt", "written.txt"]
    assert "the user said no" in done["failed"]["open.txt"]
    assert (workspace / "written.txt").read_bytes() == WRITTEN
    assert not (workspace / "created.txt").exists()
    assert lsp.text(uri) == "alpha\nBETA\ngamma\n"


async def _error(lsp: InvincatClient, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await lsp.request(method, params)
    return caught.value


async def test_refusals_say_why_and_change_nothing(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Hello."}, _call("write_file", path="a.txt", content="x")])
    first = await lsp.chat("hello", wait=True)
    thread = first["threadId"]

    error = await _error(lsp, "invincat/checkpoints/list", {"threadId": "t_nope"})
    assert error.code == -32011 and "t_nope" in error.message
    error = await _error(lsp, "invincat/checkpoints/diff", {"threadId": thread, "toTurn": 5})
    assert error.code == -32602 and "choose a turn from 1 to 1" in error.message
    error = await _error(lsp, "invincat/checkpoints/diff", {"threadId": thread})
    assert error.code == -32602 and "`toTurn`" in error.message
    error = await _error(lsp, "invincat/checkpoints/restore", {"threadId": thread, "undo": True})
    assert error.code == -32013 and "no rewind to undo" in error.message

    busy = await lsp.chat("write a.txt", threadId=thread)
    await lsp.wait_event("approval_requested")
    error = await _error(
        lsp,
        "invincat/checkpoints/restore",
        {"threadId": thread, "toTurn": 1, "scope": "both"},
    )
    assert error.code == -32012 and "wait for it or cancel it before rewinding" in error.message
    assert (await lsp.request("invincat/cancel", {"turnId": busy["turnId"]}))["cancelled"]
    assert (await lsp.turn_end(busy["turnId"]))["status"] == "cancelled"


async def test_the_conversation_scope_makes_the_thread_forget_the_turns(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "One."}, {"content": "Two."}])
    first = await lsp.chat("first question", wait=True)
    thread = first["threadId"]
    await lsp.chat("second question", threadId=thread, wait=True)
    plan = await lsp.request(
        "invincat/checkpoints/diff", {"threadId": thread, "toTurn": 2, "scope": "conversation"}
    )
    assert plan["files"] == [] and plan["scope"] == "conversation"
    done = await lsp.request(
        "invincat/checkpoints/restore",
        {"threadId": thread, "toTurn": 2, "scope": "conversation"},
    )
    assert done["conversation_removed"] == 2 and done["restored"] == []
    history = await lsp.request("invincat/threads/history", {"threadId": thread})
    assert [m["content"] for m in history["messages"] if m["role"] == "user"] == ["first question"]
