"""Multi-root workspaces (docs/protocol.md, "Multi-root workspaces"): every workspace
folder is its own project, and each request works in the project it concerns: a chat
about a file of the second folder reads, mentions and writes there, project memory and
approvals stay with their project, and folders can come and go."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient, file_uri, start_client, stop_client, wait_until
from tests.lsp.test_code_actions import BROKEN, FIXED
from tests.lsp.test_memory import QUIET, create_op

JSON_ERROR = types.Diagnostic(
    range=types.Range(
        start=types.Position(line=0, character=16), end=types.Position(line=0, character=25)
    ),
    message="Expected comma",
    severity=types.DiagnosticSeverity.Error,
    source="json",
)
"""What the editor's JSON support reports for BROKEN (another server's diagnostic)."""
CURSOR = types.Range(
    start=types.Position(line=0, character=17), end=types.Position(line=0, character=17)
)


def _project(path: Path) -> Path:
    (path / ".git").mkdir(parents=True)
    return path


@pytest.fixture
def second(tmp_path: Path) -> Path:
    """Folder B: a project of its own, next to `workspace` (folder A)."""
    return _project(tmp_path / "project-b")


@pytest.fixture
async def two(
    invincat_env: dict[str, str], workspace: Path, second: Path, editor: str
) -> AsyncIterator[InvincatClient]:
    client = await start_client(invincat_env, workspace, editor, more_folders=(second,))
    yield client
    await stop_client(client)


async def _refused(lsp: InvincatClient, method: str, params: Any) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await lsp.request(method, params)
    assert caught.value.code == -32602
    return caught.value.message


async def _actions(
    lsp: InvincatClient, uri: str, where: types.Range, diagnostics: list[types.Diagnostic]
) -> list[Any]:
    result = await lsp.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=where,
            context=types.CodeActionContext(diagnostics=diagnostics),
        )
    )
    return list(result or [])


async def _execute(lsp: InvincatClient, command: types.Command) -> Any:
    return await lsp.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    )


def _folders(status: dict[str, Any]) -> list[str]:
    return [project["folder"] for project in status["projects"]]


async def _ready(lsp: InvincatClient, *folders: Path) -> dict[str, Any]:
    """The last statusChanged once it lists exactly `folders`, all ready."""
    wanted = [file_uri(folder) for folder in folders]

    def done() -> bool:
        last = lsp.status_changes[-1] if lsp.status_changes else None
        return bool(last) and _folders(last) == wanted and last["state"] == "ready"

    await wait_until(done, what=f"status ready with {wanted}")
    return lsp.status_changes[-1]


async def test_a_chat_about_a_file_of_the_second_folder_reads_mentions_and_writes_there(
    two: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path, second: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha lives in A\n")
    (workspace / "todo.txt").write_text("A's todo list\n")
    (second / "notes.txt").write_text("bravo lives in B\n")
    (second / "todo.txt").write_text("B's todo list\n")
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "out.txt", "content": "hi\n"}}
                ]
            },
            {"content": "Written."},
        ]
    )
    notes = file_uri(second / "notes.txt")
    context = {"activeDocument": {"uri": notes}, "attachments": [{"uri": notes}]}
    ref = await two.chat("summarise this and @todo.txt into out.txt", context=context)
    asked = await two.wait_event("approval_requested", where=lambda e: e["turnId"] == ref["turnId"])

    content = fake_openai.chat_requests()[0]["messages"][-1]["content"]
    assert "bravo lives in B" in content and "B's todo list" in content
    assert "alpha lives in A" not in content and "A's todo list" not in content

    approval_id = asked["event"]["approval_id"]
    assert await two.resolve(approval_id, "approve") == {"resolved": True}
    assert (await two.turn_end(ref["turnId"]))["status"] == "completed"
    assert (second / "out.txt").read_text() == "hi\n"
    assert not (workspace / "out.txt").exists()

    # The thread is B's: listed with B's root, its history served.
    [thread] = (await two.request("invincat/threads/list", {"folder": file_uri(second)}))["threads"]
    assert thread["threadId"] == ref["threadId"] and thread["workspace"] == str(second.resolve())
    history = await two.request("invincat/threads/history", {"threadId": ref["threadId"]})
    assert history["messages"][0]["content"] == "summarise this and @todo.txt into out.txt"


async def test_context_of_either_folder_is_accepted_and_anything_else_refused(
    two: InvincatClient, fake_openai: FakeOpenAIServer, second: Path, tmp_path: Path
) -> None:
    (second / "b.txt").write_text("in B\n")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("private notes\n")
    message = await _refused(
        two,
        "invincat/chat",
        {"prompt": "explain", "context": {"attachments": [{"uri": file_uri(outside)}]}},
    )
    assert file_uri(outside) in message and "outside the workspace" in message
    message = await _refused(two, "invincat/chat", {"prompt": "x", "folder": file_uri(outside)})
    assert file_uri(outside) in message and file_uri(second) in message  # names the folders
    message = await _refused(two, "invincat/memory/list", {"folder": 42})
    assert "`folder` must be a string, got number" in message

    fake_openai.add_steps([{"content": "It says in B."}])
    context = {"attachments": [{"uri": file_uri(second / "b.txt")}]}
    ref = await two.chat("explain", context=context, wait=True)
    assert ref["status"] == "completed"
    assert "in B" in fake_openai.chat_requests()[-1]["messages"][-1]["content"]


async def test_project_memory_is_per_folder_and_user_memory_changes_are_announced_once(
    two: InvincatClient, workspace: Path, second: Path
) -> None:
    b = file_uri(second)
    applied = await two.request(
        "invincat/memory/apply",
        {"scope": "project", "operations": [create_op("B builds with make")], "folder": b},
    )
    assert applied["applied"] and not applied["rejected"]
    b_store = second.resolve() / ".invincat" / "memory_project.json"
    assert "B builds with make" in b_store.read_text()
    assert not (workspace / ".invincat" / "memory_project.json").exists()
    change = await two.memory_change(1)
    assert change == {"scope": "project", "batchId": applied["batch_id"], "folder": b}

    in_b = await two.request("invincat/memory/list", {"scope": "project", "folder": b})
    assert [i["content"] for i in in_b["items"]] == ["B builds with make"]
    assert in_b["stores"]["project"] == str(b_store)
    # A file inside B names B's project too; no folder means the first folder's (A).
    inner = await two.request("invincat/memory/list", {"folder": file_uri(second / "src" / "x.py")})
    assert inner["stores"]["project"] == str(b_store)
    in_a = await two.request("invincat/memory/list", {"scope": "project"})
    assert in_a["items"] == []
    assert in_a["stores"]["project"] == str(
        workspace.resolve() / ".invincat" / "memory_project.json"
    )

    user_op = {**create_op("I prefer short answers"), "scope": "user"}
    user = await two.request(
        "invincat/memory/apply", {"scope": "user", "operations": [user_op], "folder": b}
    )
    assert await two.memory_change(2) == {"scope": "user", "batchId": user["batch_id"]}
    await asyncio.sleep(QUIET)  # both projects' services share the user store
    assert len(two.memory_changes) == 2


async def test_threads_of_both_projects_are_listed_and_stay_in_their_project(
    two: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path, second: Path
) -> None:
    a, b = file_uri(workspace), file_uri(second)
    fake_openai.add_steps([{"content": "Hello from A."}, {"content": "Hello from B."}])
    in_a = await two.chat("hi A", folder=a, wait=True)
    in_b = await two.chat("hi B", folder=b, wait=True)
    assert in_a["status"] == in_b["status"] == "completed"

    listed = (await two.request("invincat/threads/list", {}))["threads"]
    assert [(t["threadId"], t["workspace"]) for t in listed] == [
        (in_b["threadId"], str(second.resolve())),
        (in_a["threadId"], str(workspace.resolve())),
    ]
    only_a = (await two.request("invincat/threads/list", {"folder": a}))["threads"]
    assert [t["threadId"] for t in only_a] == [in_a["threadId"]]

    message = await _refused(
        two, "invincat/chat", {"prompt": "go on", "threadId": in_a["threadId"], "folder": b}
    )
    assert f"thread {in_a['threadId']} belongs to {workspace.resolve()}" in message

    # Continuing without a folder stays in the thread's project.
    (second / "file.txt").write_text("B's file\n")
    fake_openai.add_steps([{"content": "Continued."}])
    again = await two.chat("and @file.txt?", threadId=in_b["threadId"], wait=True)
    assert again["status"] == "completed"
    assert "B's file" in fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    history = await two.request("invincat/threads/history", {"threadId": in_b["threadId"]})
    assert [m["content"] for m in history["messages"] if m["role"] == "user"] == [
        "hi B",
        "and @file.txt?",
    ]


async def test_fix_this_on_a_document_of_the_second_folder_runs_and_edits_there(
    two: InvincatClient,
    fake_openai: FakeOpenAIServer,
    workspace: Path,
    second: Path,
    tmp_path: Path,
) -> None:
    # A document in no folder gets no Invincat actions.
    (tmp_path / "loose").mkdir()
    loose = two.open_document(tmp_path / "loose" / "package.json", BROKEN)
    assert await _actions(two, loose, CURSOR, [JSON_ERROR]) == []

    uri = two.open_document(second / "package.json", BROKEN)
    [fix] = await _actions(two, uri, CURSOR, [JSON_ERROR])
    args = {
        "path": "package.json",
        "old_string": '"demo" "version"',
        "new_string": '"demo", "version"',
    }
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "edit_file", "arguments": args}]},
            {"content": "Added the comma."},
        ]
    )
    ref = await _execute(two, fix.command)
    await two.wait_event("approval_requested", where=lambda e: e["turnId"] == ref["turnId"])
    # The pending edit is shown on B's document (the path is B-relative).
    [mark] = await wait_until(lambda: two.diagnostics.get(uri), what="pending-edit diagnostic")
    accept = (await _actions(two, uri, mark.range, [mark]))[0]
    assert accept.title == "Invincat: accept proposed edit"
    assert await _execute(two, accept.command) == {"resolved": True}
    assert (await two.turn_end(ref["turnId"]))["status"] == "completed"
    assert two.text(uri) == FIXED
    assert not (workspace / "package.json").exists()
    [thread] = (await two.request("invincat/threads/list", {"folder": file_uri(second)}))["threads"]
    assert thread["threadId"] == ref["threadId"]


def _folders_changed(lsp: InvincatClient, added: list[Path], removed: list[Path]) -> None:
    lsp.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=file_uri(p), name=p.name) for p in added],
                removed=[types.WorkspaceFolder(uri=file_uri(p), name=p.name) for p in removed],
            )
        )
    )


async def test_folders_come_and_go_and_a_closed_projects_approval_waits_for_it(
    two: InvincatClient,
    fake_openai: FakeOpenAIServer,
    workspace: Path,
    second: Path,
    tmp_path: Path,
) -> None:
    third = _project(tmp_path / "project-c")
    capabilities = two.server_capabilities
    assert capabilities is not None and capabilities.workspace is not None
    folders = capabilities.workspace.workspace_folders
    assert folders is not None and folders.supported and folders.change_notifications
    (second / "notes.txt").write_text("alpha\n")
    await _ready(two, workspace, second)
    edit = {"path": "notes.txt", "old_string": "alpha", "new_string": "beta"}
    fake_openai.add_steps([{"tool_calls": [{"name": "edit_file", "arguments": edit}]}])
    ref = await two.chat("change alpha to beta", folder=file_uri(second))
    asked = await two.wait_event("approval_requested", where=lambda e: e["turnId"] == ref["turnId"])
    approval_id = asked["event"]["approval_id"]
    notes = file_uri(second / "notes.txt")
    await wait_until(lambda: two.diagnostics.get(notes), what="pending-edit diagnostic in B")

    _folders_changed(two, added=[third], removed=[second])
    status = await _ready(two, workspace, third)
    assert [p["root"] for p in status["projects"]] == [
        str(workspace.resolve()),
        str(third.resolve()),
    ]
    await wait_until(lambda: len(two.diagnostics[notes]) == 0, what="B's diagnostics cleared")
    assert (await two.turn_end(ref["turnId"]))["status"] == "cancelled"
    assert (await two.request("invincat/pendingApprovals", {}))["approvals"] == []
    # Deciding it now would resume B's turn in another project's root: refused.
    message = await _refused(
        two, "invincat/resolveApproval", {"approvalId": approval_id, "decision": "approve"}
    )
    assert "which is not open" in message and str(second.resolve()) in message
    assert (second / "notes.txt").read_text() == "alpha\n"

    (third / "c.txt").write_text("charlie lives in C\n")
    fake_openai.add_steps([{"content": "C it is."}])
    context = {"attachments": [{"uri": file_uri(third / "c.txt")}]}
    in_c = await two.chat("what is here?", context=context, wait=True)
    assert in_c["status"] == "completed"
    assert "charlie lives in C" in fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    message = await _refused(two, "invincat/memory/list", {"folder": file_uri(second)})
    assert "is in no open workspace folder" in message

    # B again: its approval is back, and deciding it now runs the edit in B.
    _folders_changed(two, added=[second], removed=[])
    await _ready(two, workspace, third, second)
    pending = await two.request("invincat/pendingApprovals", {"folder": file_uri(second)})
    assert [a["approval_id"] for a in pending["approvals"]] == [approval_id]
    fake_openai.add_steps([{"content": "Changed."}])
    assert (await two.resolve(approval_id, "approve"))["resolved"] is True
    await wait_until(lambda: (second / "notes.txt").read_text() == "beta\n", what="edit in B")

    _folders_changed(two, added=[], removed=[workspace, second, third])
    await wait_until(lambda: two.status_changes[-1]["projects"] == [], what="no project")
    message = await _refused(two, "invincat/threads/list", {})
    assert "No workspace folder is open" in message
    assert json.dumps(await two.request("invincat/status")) == json.dumps(two.status_changes[-1])


async def test_without_a_model_every_project_fails_with_one_message_and_memory_works(
    invincat_env: dict[str, str], workspace: Path, second: Path, editor: str
) -> None:
    env = {k: v for k, v in invincat_env.items() if k != "OPENAI_API_KEY"}
    client = await start_client(env, workspace, editor, more_folders=(second,))
    try:

        def both_failed() -> bool:
            last = client.status_changes[-1] if client.status_changes else None
            return bool(last) and [p["state"] for p in last["projects"]] == ["failed", "failed"]

        await wait_until(both_failed, what="both projects failed")
        status = await client.request("invincat/status")
        assert status["state"] == "failed" and "OPENAI_API_KEY is not set" in status["message"]
        assert [p["folder"] for p in status["projects"]] == [file_uri(workspace), file_uri(second)]
        assert all("OPENAI_API_KEY" in p["message"] for p in status["projects"])
        shown = [m.message for m in client.messages if "OPENAI_API_KEY" in m.message]
        assert len(shown) == 1  # one window message, not one per folder
        listed = await client.request("invincat/memory/list", {"folder": file_uri(second)})
        assert listed["stores"]["project"].startswith(str(second.resolve()))
    finally:
        await stop_client(client)


async def test_a_folder_and_a_symlink_to_it_are_one_project_whichever_is_removed(
    invincat_env: dict[str, str],
    fake_openai: FakeOpenAIServer,
    workspace: Path,
    tmp_path: Path,
    editor: str,
) -> None:
    # The core's project_root decides, as for `invincat memory|rules|chat`: one project,
    # one Session, the thread of one folder continued from the other.
    link = tmp_path / "link-to-project"
    link.symlink_to(workspace, target_is_directory=True)
    lsp = await start_client(invincat_env, workspace, editor, more_folders=(link,))
    try:
        status = await _ready(lsp, workspace)
        assert [p["root"] for p in status["projects"]] == [str(workspace.resolve())]
        fake_openai.add_steps([{"content": "Via the link."}, {"content": "Via the folder."}])
        first = await lsp.chat("hi", folder=file_uri(link), wait=True)
        again = await lsp.chat(
            "go on", threadId=first["threadId"], folder=file_uri(workspace), wait=True
        )
        assert first["status"] == again["status"] == "completed"
        history = await lsp.request("invincat/threads/history", {"threadId": first["threadId"]})
        assert [m["content"] for m in history["messages"] if m["role"] == "user"] == [
            "hi",
            "go on",
        ]

        # Removing the real folder leaves the link's folder, and the project, open.
        _folders_changed(lsp, added=[], removed=[workspace])
        status = await _ready(lsp, link)
        assert [p["root"] for p in status["projects"]] == [str(workspace.resolve())]
        listed = await lsp.request("invincat/threads/list", {"folder": file_uri(link)})
        assert [t["threadId"] for t in listed["threads"]] == [first["threadId"]]
    finally:
        await stop_client(lsp)
