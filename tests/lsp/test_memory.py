"""Governed memory over LSP: the sidebar's requests, and `invincat/memory/didChange`
whoever changed a store (this server, a turn's memory agent, another process)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import INVINCAT, InvincatClient, file_uri, start_client, stop_client

MEMORY_MODEL = "memory-model"
QUIET = 1.5
"""Longer than the server's 1 s store poll: time enough for a duplicate to show up."""


def create_op(content: str) -> dict[str, Any]:
    return {
        "op": "create",
        "scope": "project",
        "section": "Testing",
        "content": content,
        "confidence": "high",
        "score": 85,
        "score_reason": "the user asked to remember it",
    }


async def _error(lsp: InvincatClient, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await lsp.request(method, params)
    # Whatever went wrong, the next request is served.
    assert "items" in await lsp.request("invincat/memory/list", {})
    return caught.value


async def test_list_apply_log_revert_round_trip_announces_each_change_once(
    lsp: InvincatClient, workspace: Path
) -> None:
    empty = await lsp.request("invincat/memory/list", {})
    project_store = workspace.resolve() / ".invincat" / "memory_project.json"
    assert empty["items"] == [] and empty["stores"]["project"] == str(project_store)

    created = await lsp.request(
        "invincat/memory/apply",
        {"scope": "project", "operations": [create_op("Run the tests with pytest -q")]},
    )
    assert created["actor"] == "user" and not created["rejected"]
    [applied] = created["applied"]
    entry_id = applied["id"]
    assert await lsp.memory_change(1) == {
        "scope": "project",
        "batchId": created["batch_id"],
        "folder": file_uri(workspace),
    }

    # The sidebar's archive: a one-op batch through the same path.
    archive = {"op": "archive", "scope": "project", "id": entry_id, "reason": "outdated"}
    archived = await lsp.request(
        "invincat/memory/apply", {"scope": "project", "operations": [archive]}
    )
    assert [a["op"] for a in archived["applied"]] == ["archive"]
    assert await lsp.memory_change(2) == {
        "scope": "project",
        "batchId": archived["batch_id"],
        "folder": file_uri(workspace),
    }
    assert (await lsp.request("invincat/memory/list", {}))["items"] == []
    [item] = (await lsp.request("invincat/memory/list", {"includeArchived": True}))["items"]
    assert item["id"] == entry_id and item["status"] == "archived"
    assert (item["section"], item["tier"], item["score"], item["confidence"]) == (
        "Testing",
        "hot",
        85,
        "high",
    )
    assert item["invalid"] is None and item["archived_at"] and item["created_at"]

    log = await lsp.request("invincat/memory/log", {"scope": "project"})
    assert [r["batch_id"] for r in log["records"]] == [archived["batch_id"], created["batch_id"]]
    shown = await lsp.request("invincat/memory/show", {"id": entry_id})
    assert shown["entry"]["status"] == "archived" and len(shown["history"]) == 2

    reverted = await lsp.request("invincat/memory/revert", {"batchId": archived["batch_id"]})
    assert reverted["reverts"] == archived["batch_id"]
    assert await lsp.memory_change(3) == {
        "scope": "project",
        "batchId": reverted["batch_id"],
        "folder": file_uri(workspace),
    }
    [active] = (await lsp.request("invincat/memory/list", {"scope": "project"}))["items"]
    assert active["id"] == entry_id and active["status"] == "active"

    # A batch governance refuses is a report, not an error, and changes nothing.
    unknown = {"op": "archive", "scope": "project", "id": "mem_p_999999", "reason": "x"}
    refused = await lsp.request(
        "invincat/memory/apply", {"scope": "project", "operations": [unknown]}
    )
    assert refused["applied"] == [] and "mem_p_999999" in refused["dropped"][0]["reason"]

    await asyncio.sleep(QUIET)
    assert len(lsp.memory_changes) == 3  # one per change, none for the refused batch


async def test_bad_memory_requests_get_actionable_errors_and_the_server_keeps_serving(
    lsp: InvincatClient, workspace: Path
) -> None:
    error = await _error(lsp, "invincat/memory/list", {"scope": "team"})
    assert error.code == -32602 and "`scope` must be one of 'user', 'project'" in error.message
    error = await _error(lsp, "invincat/memory/apply", {"scope": "project", "operations": {}})
    assert error.code == -32602 and "`operations` must be an array" in error.message
    error = await _error(lsp, "invincat/memory/apply", {"scope": "project", "operations": [42]})
    assert error.code == -32602 and "operations 0 are not" in error.message
    error = await _error(lsp, "invincat/memory/revert", {"batchId": "b_nope"})
    assert error.code == -32015 and "invincat memory log" in error.message
    error = await _error(lsp, "invincat/memory/show", {"id": "mem_p_000042"})
    assert error.code == -32015 and "No memory entry mem_p_000042" in error.message
    error = await _error(lsp, "invincat/memory/log", {"limit": 0})
    assert error.code == -32602

    # A store written by a newer invincat: listed read-only with the problem, never written.
    store = workspace / ".invincat" / "memory_project.json"
    store.parent.mkdir()
    newer = {"version": 3, "scope": "project", "items": []}
    store.write_text(json.dumps(newer))
    listed = await lsp.request("invincat/memory/list", {})
    assert "upgrade invincat" in listed["problems"]["project"]
    error = await _error(
        lsp, "invincat/memory/apply", {"scope": "project", "operations": [create_op("x")]}
    )
    assert error.code == -32014 and "upgrade invincat" in error.message
    assert json.loads(store.read_text()) == newer
    # Edited outside governance: announced once, without a batch.
    assert await lsp.memory_change(1) == {
        "scope": "project",
        "batchId": None,
        "folder": file_uri(workspace),
    }


async def test_did_change_follows_the_memory_agent_and_other_processes(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    env = {
        **invincat_env,
        "INVINCAT_MEMORY_EXTRACTION": "on",
        "INVINCAT_MEMORY_MODEL": MEMORY_MODEL,
    }
    call = {
        "name": "submit_memory_operations",
        "arguments": {"operations": [create_op("Run the tests with pytest -q")]},
    }
    fake_openai.add_steps(
        [
            {"match": {"model": MEMORY_MODEL}, "tool_calls": [call]},
            {"match": {"model": "fake-model"}, "content": "Noted."},
        ]
    )
    client = await start_client(env, workspace, editor)
    try:
        ref = await client.chat("remember that we run the tests with pytest -q")
        await client.turn_end(ref["turnId"])
        # The memory agent works after turn_end; its events still reach the editor.
        changed = await client.wait_event("memory_changed")
        kinds = [e["type"] for e in client.turn_events(ref["turnId"])]
        assert kinds.index("turn_end") < kinds.index("memory_changed")
        batch_id = changed["event"]["batch_id"]
        assert await client.memory_change(1) == {
            "scope": "project",
            "batchId": batch_id,
            "folder": file_uri(workspace),
        }
        [entry] = (await client.request("invincat/memory/list", {}))["items"]
        assert entry["content"] == "Run the tests with pytest -q"
        assert entry["source"]["actor"] == "memory_agent"

        # Another process changes the store: the editor hears of it with that batch.
        archive = await asyncio.to_thread(
            subprocess.run,
            [INVINCAT, "memory", "archive", entry["id"], "--reason", "x"],
            env=invincat_env,
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert archive.returncode == 0, archive.stderr
        external = await client.memory_change(2)
        [latest] = (await client.request("invincat/memory/log", {"limit": 1}))["records"]
        assert latest["actor"] == "user" and latest["applied"][0]["op"] == "archive"
        assert external == {
            "scope": "project",
            "batchId": latest["batch_id"],
            "folder": file_uri(workspace),
        }

        await asyncio.sleep(QUIET)
        assert len(client.memory_changes) == 2
    finally:
        await stop_client(client)


async def test_memory_requests_work_without_a_configured_model(
    invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    env = {k: v for k, v in invincat_env.items() if k != "OPENAI_API_KEY"}
    client = await start_client(env, workspace, editor)
    try:
        created = await client.request(
            "invincat/memory/apply",
            {"scope": "user", "operations": [create_op("x") | {"scope": "user"}]},
        )
        assert created["applied"][0]["id"].startswith("mem_u_")
        assert await client.memory_change(1) == {"scope": "user", "batchId": created["batch_id"]}
        [item] = (await client.request("invincat/memory/list", {"scope": "user"}))["items"]
        assert item["content"] == "x"
    finally:
        await stop_client(client)


async def test_verify_reports_stale_citations_and_list_carries_the_flag(
    lsp: InvincatClient, workspace: Path
) -> None:
    (workspace / "deploy.sh").write_text("#!/bin/sh\n./build.sh --release\n")
    op = create_op("Deploy builds with --release")
    op["citations"] = [{"path": "deploy.sh", "start_line": 2, "end_line": 2}]
    created = await lsp.request("invincat/memory/apply", {"scope": "project", "operations": [op]})
    [applied] = created["applied"]
    fresh = await lsp.request("invincat/memory/verify", {})
    assert (fresh["checked"], fresh["stale"]) == (1, 0)

    (workspace / "deploy.sh").write_text("#!/bin/sh\n./build.sh --debug\n")
    report = await lsp.request("invincat/memory/verify", {"scope": "project"})
    [entry] = report["entries"]
    assert (entry["id"], entry["state"], report["stale"]) == (applied["id"], "stale", 1)
    assert entry["note"] == "may be stale: deploy.sh line 2 changed"
    [item] = (await lsp.request("invincat/memory/list", {}))["items"]
    assert item["stale"] is True
    assert item["citations"][0]["path"] == "deploy.sh"
    assert item["citations"][0]["start_line"] == 2


async def test_entries_carry_their_attribution_and_log_filters_by_author(
    invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(workspace), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "feature/api")
    git("config", "user.name", "Ada Lovelace")
    git("config", "user.email", "ada@example.com")
    client = await start_client(invincat_env, workspace, editor)
    try:
        created = await client.request(
            "invincat/memory/apply", {"scope": "project", "operations": [create_op("Use uv")]}
        )
        [item] = (await client.request("invincat/memory/list", {}))["items"]
        assert item["id"] == created["applied"][0]["id"]
        assert item["source"]["author"] == {"name": "Ada Lovelace", "email": "ada@example.com"}
        assert item["source"]["branch"] == "feature/api"
        shown = await client.request("invincat/memory/show", {"id": item["id"]})
        assert shown["history"][0]["author"]["name"] == "Ada Lovelace"
        ada = await client.request("invincat/memory/log", {"author": "LOVELACE"})
        assert [r["batch_id"] for r in ada["records"]] == [created["batch_id"]]
        assert (await client.request("invincat/memory/log", {"author": "bob"}))["records"] == []
        for bad in ("", 5, "x" * 401):
            error = await _error(client, "invincat/memory/log", {"author": bad})
            assert error.code == -32602 and "author" in error.message, bad
    finally:
        await stop_client(client)
