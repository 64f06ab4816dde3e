"""`invincat/rules/list` and `invincat/rules/revoke` on the real language server: rules
granted through real approvals are listed (session and workspace) with the label they
were granted with, revoking one makes the next call ask again; bad params are -32602 and
change nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient, file_uri, start_client, stop_client, wait_until
from tests.terminal.test_rules_cli import grant_workspace_rule


def _execute(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command}}]}


async def _asked(lsp: InvincatClient, fake: FakeOpenAIServer, command: str) -> tuple[str, Any]:
    """Start a chat whose model runs `command`; (its turn id, the approval event)."""
    fake.add_steps([_execute(command), {"content": "ran"}])
    ref = await lsp.chat(f"run {command}")
    found = await lsp.wait_event("approval_requested", where=lambda e: e["turnId"] == ref["turnId"])
    return ref["turnId"], found["event"]


async def _grant(lsp: InvincatClient, fake: FakeOpenAIServer, command: str, scope: str) -> str:
    turn_id, asked = await _asked(lsp, fake, command)
    await lsp.resolve(asked["approval_id"], "approve_always", scope=scope)
    assert (await lsp.turn_end(turn_id))["status"] == "completed"
    label: str = next(o for o in asked["always_options"] if o["scope"] == scope)["label"]
    return label


async def _refused(lsp: InvincatClient, method: str, params: Any, code: int = -32602) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await lsp.request(method, params)
    assert caught.value.code == code, caught.value
    return str(caught.value.message)


async def test_rules_are_listed_and_a_revoked_one_asks_again(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path, invincat_home: Path
) -> None:
    session_label = await _grant(lsp, fake_openai, "pytest --version", "session")
    workspace_label = await _grant(lsp, fake_openai, "ls -la", "workspace")

    listed = await lsp.request("invincat/rules/list", {"folder": file_uri(workspace)})
    assert listed["problems"] == []
    by_scope = {item["scope"]: item for item in listed["items"]}
    assert [item["scope"] for item in listed["items"]] == ["session", "workspace"]
    assert by_scope["session"]["covers"] == session_label
    assert by_scope["workspace"]["covers"] == workspace_label
    assert by_scope["workspace"]["command"] == "ls"
    assert by_scope["workspace"]["workspace"] == str(workspace.resolve())

    for item in listed["items"]:
        answer = await lsp.request("invincat/rules/revoke", {"id": item["id"]})
        assert answer["revoked"]["id"] == item["id"]
    assert (await lsp.request("invincat/rules/list", {}))["items"] == []
    assert "ls" not in (invincat_home / "approvals.json").read_text(encoding="utf-8")

    # Neither rule covers the call any more: it asks again.
    turn_id, asked = await _asked(lsp, fake_openai, "pytest -q")
    assert asked["tool_name"] == "execute"
    await lsp.resolve(asked["approval_id"], "reject")
    assert (await lsp.turn_end(turn_id))["status"] == "completed"


async def test_bad_params_are_refused_and_change_nothing(
    lsp: InvincatClient,
    fake_openai: FakeOpenAIServer,
    workspace: Path,
    invincat_home: Path,
    tmp_path: Path,
) -> None:
    await _grant(lsp, fake_openai, "ls -la", "workspace")
    before = (invincat_home / "approvals.json").read_bytes()
    revoke = "invincat/rules/revoke"
    assert "`id` must be a string, got number" in await _refused(lsp, revoke, {"id": 42})
    assert "`id` is required" in await _refused(lsp, revoke, {})
    assert "expected an object" in await _refused(lsp, revoke, ["r_1"])
    for bad in ("r_000000000000", "r_\x00", "x" * 1_000_000):
        assert "No approval rule with id" in await _refused(lsp, revoke, {"id": bad})
    outside = file_uri(tmp_path / "elsewhere")
    assert "in no open workspace folder" in await _refused(
        lsp, "invincat/rules/list", {"folder": outside}
    )
    assert "`folder` must be a string" in await _refused(lsp, "invincat/rules/list", {"folder": 1})
    assert (invincat_home / "approvals.json").read_bytes() == before
    assert len((await lsp.request("invincat/rules/list", {}))["items"]) == 1


async def test_a_damaged_rules_file_costs_only_its_own_rules(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, invincat_home: Path
) -> None:
    await _grant(lsp, fake_openai, "pytest --version", "session")
    path = invincat_home / "approvals.json"
    path.write_text("{not json", encoding="utf-8")
    listed = await lsp.request("invincat/rules/list", {})
    assert [item["scope"] for item in listed["items"]] == ["session"]
    [problem] = listed["problems"]
    assert "is damaged" in problem
    message = await _refused(lsp, "invincat/rules/revoke", {"id": "r_000000000000"}, -32013)
    assert "is damaged" in message
    assert path.read_text(encoding="utf-8") == "{not json"


async def test_a_revoke_during_a_tool_call_is_not_undone_by_the_tamper_watch(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path, invincat_home: Path
) -> None:
    # The watch puts back settings a tool call changed; Invincat's own revoke, made while a
    # command runs, must stay (it is recorded as Invincat's write, like adding a rule).
    await _grant(lsp, fake_openai, "ls -la", "workspace")
    [rule] = (await lsp.request("invincat/rules/list", {}))["items"]
    waiting = "touch started; until [ -e go ]; do sleep 0.05; done; echo went"
    turn_id, asked = await _asked(lsp, fake_openai, waiting)
    await lsp.resolve(asked["approval_id"], "approve")
    # The command is running: the watch's snapshot was taken before it started.
    await wait_until(lambda: (workspace / "started").exists(), what="the command to start")
    await lsp.request("invincat/rules/revoke", {"id": rule["id"]})
    (workspace / "go").touch()
    assert (await lsp.turn_end(turn_id))["status"] == "completed"
    [result] = [e for e in lsp.turn_events(turn_id) if e["type"] == "tool_result"]
    assert "went" in result["content"] and "Settings protection" not in result["content"]
    saved = (invincat_home / "approvals.json").read_text(encoding="utf-8")
    assert '"ls"' not in saved
    assert (await lsp.request("invincat/rules/list", {}))["items"] == []


async def test_rules_are_routed_to_the_folders_project(
    invincat_env: dict[str, str],
    fake_openai: FakeOpenAIServer,
    workspace: Path,
    tmp_path: Path,
    editor: str,
) -> None:
    second = tmp_path / "project-b"
    (second / ".git").mkdir(parents=True)
    label = grant_workspace_rule(fake_openai, invincat_env, workspace)
    client = await start_client(invincat_env, workspace, editor, more_folders=(second,))
    try:
        listed_a = await client.request("invincat/rules/list", {"folder": file_uri(workspace)})
        listed_b = await client.request("invincat/rules/list", {"folder": file_uri(second)})
        assert [item["covers"] for item in listed_a["items"]] == [label]
        assert listed_b["items"] == []
        # A's rule is no rule of B's project: refused there, kept.
        rule_id = listed_a["items"][0]["id"]
        message = await _refused(
            client, "invincat/rules/revoke", {"id": rule_id, "folder": file_uri(second)}
        )
        assert "No approval rule with id" in message
        answer = await client.request(
            "invincat/rules/revoke", {"id": rule_id, "folder": file_uri(workspace / "src")}
        )
        assert answer["revoked"]["id"] == rule_id
    finally:
        await stop_client(client)


async def test_reject_always_rejects_later_calls_without_asking_until_revoked(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    turn_id, asked = await _asked(lsp, fake_openai, "touch one.txt")
    deny = asked["deny_option"]
    assert deny == {
        "scope": "session",
        "label": (
            "Reject, and reject shell commands starting with `touch` for the rest of this session"
        ),
        "tool": "execute",
        "command_prefix": "touch",
    }
    # A bad scope is refused like any decision that does not fit; nothing is remembered.
    refused = await lsp.resolve(asked["approval_id"], "reject_always", scope="workspace")
    assert refused["resolved"] is False and "session only" in refused["reason"]
    assert (await lsp.request("invincat/rules/list", {}))["items"] == []

    answer = await lsp.resolve(asked["approval_id"], "reject_always")
    assert answer["resolved"] is True
    assert (await lsp.turn_end(turn_id))["status"] == "completed"
    [resolved] = [e for e in lsp.turn_events(turn_id) if e["type"] == "approval_resolved"]
    assert resolved["decision"] == "reject_always (session)"
    assert resolved["remembered"] == deny["label"]

    fake_openai.add_steps([_execute("touch two.txt"), {"content": "not asked"}])
    ref = await lsp.chat("run touch two")
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"
    events = lsp.turn_events(ref["turnId"])
    assert [e["status"] for e in events if e["type"] == "tool_result"] == ["rejected"]
    assert not [e for e in events if e["type"] == "approval_requested"]

    [rule] = (await lsp.request("invincat/rules/list", {}))["items"]
    assert rule["effect"] == "deny" and rule["scope"] == "session" and rule["command"] == "touch"
    revoked = await lsp.request("invincat/rules/revoke", {"id": rule["id"]})
    assert revoked["revoked"]["id"] == rule["id"]
    turn_id, asked = await _asked(lsp, fake_openai, "touch three.txt")  # asks again
    await lsp.resolve(asked["approval_id"], "reject")
    assert (await lsp.turn_end(turn_id))["status"] == "completed"
    assert not any((workspace / n).exists() for n in ("one.txt", "two.txt", "three.txt"))


async def _batch_of_two(lsp: InvincatClient, turn_id: str) -> list[Any]:
    """The two approval events of the turn's batch, once both arrived."""

    def asked() -> list[Any]:
        return [e for e in lsp.turn_events(turn_id) if e["type"] == "approval_requested"]

    await wait_until(lambda: len(asked()) == 2, what="both approvals of the batch")
    return asked()


async def test_reject_always_answers_the_calls_of_its_batch_it_covers(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    # Two `rm` calls in one model message: one batch of two approvals. "Reject always" on
    # the first answers the second too (the rule covers it): the editor is not asked again.
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text("keep\n", encoding="utf-8")
    calls = [
        {"name": "execute", "arguments": {"command": f"rm {name}"}} for name in ("a.txt", "b.txt")
    ]
    fake_openai.add_steps([{"tool_calls": calls}, {"content": "nothing removed"}])
    ref = await lsp.chat("remove both")
    turn_id = ref["turnId"]
    first, second = await _batch_of_two(lsp, turn_id)
    assert first["deny_option"] == second["deny_option"]

    answer = await lsp.resolve(first["approval_id"], "reject_always")
    assert answer["resolved"] is True
    assert (await lsp.turn_end(turn_id))["status"] == "completed"
    events = lsp.turn_events(turn_id)
    resolved = {e["approval_id"]: e for e in events if e["type"] == "approval_resolved"}
    assert resolved[first["approval_id"]]["decision"] == "reject_always (session)"
    assert resolved[second["approval_id"]]["decision"] == "reject"
    assert resolved[second["approval_id"]]["remembered"] is None
    assert [e["status"] for e in events if e["type"] == "tool_result"] == ["rejected", "rejected"]
    # Answered by the core: a late answer from the editor is refused and changes nothing.
    late = await lsp.resolve(second["approval_id"], "approve")
    assert late["resolved"] is False and "already resolved" in late["reason"]
    assert (await lsp.request("invincat/pendingApprovals", {}))["approvals"] == []
    tool_messages = [m for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 2
    assert "rejected such calls for this session" in tool_messages[1]["content"]
    assert all((workspace / name).read_text() == "keep\n" for name in ("a.txt", "b.txt"))


async def test_reject_always_leaves_the_calls_of_its_batch_it_does_not_cover_asked(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    calls = [
        {"name": "execute", "arguments": {"command": "rm gone.txt"}},
        {"name": "execute", "arguments": {"command": "echo still-asked"}},
    ]
    fake_openai.add_steps([{"tool_calls": calls}, {"content": "one of two"}])
    ref = await lsp.chat("remove one, say one")
    turn_id = ref["turnId"]
    rm, echo = await _batch_of_two(lsp, turn_id)
    assert (await lsp.resolve(rm["approval_id"], "reject_always"))["resolved"] is True
    [pending] = (await lsp.request("invincat/pendingApprovals", {}))["approvals"]
    assert pending["approval_id"] == echo["approval_id"]  # `echo` is no `rm`: still asked
    assert (await lsp.resolve(echo["approval_id"], "approve"))["resolved"] is True
    assert (await lsp.turn_end(turn_id))["status"] == "completed"
    results = [e for e in lsp.turn_events(turn_id) if e["type"] == "tool_result"]
    assert [r["status"] for r in results] == ["rejected", "success"]
    assert "still-asked" in results[1]["content"]
