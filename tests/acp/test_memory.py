"""Memory extension methods over ACP, each change announced with a notice."""

from __future__ import annotations

from pathlib import Path

from acp import RequestError

from tests.acp.conftest import Agent


def _create(content: str) -> dict:
    return {
        "op": "create",
        "scope": "project",
        "section": "Testing",
        "content": content,
        "confidence": "high",
        "score": 85,
        "score_reason": "the user asked to remember it",
    }


async def test_list_apply_show_log_revert_and_change_notices(agent: Agent, workspace: Path) -> None:
    conn, sid = agent.conn, agent.session_id
    empty = await conn.ext_method("invincat/memory/list", {"sessionId": sid})
    store = workspace.resolve() / ".invincat" / "memory_project.json"
    assert empty["items"] == [] and empty["stores"]["project"] == str(store)

    created = await conn.ext_method(
        "invincat/memory/apply",
        {"sessionId": sid, "scope": "project", "operations": [_create("Run pytest -q")]},
    )
    assert created["actor"] == "user" and not created["rejected"]
    entry_id = created["applied"][0]["id"]
    await agent.client.wait_for(lambda: agent.client.ext_notifications)
    method, notice = agent.client.ext_notifications[0]
    assert method == "invincat/memory/changed"  # the SDK strips the leading underscore
    assert any(m.get("method") == "_invincat/memory/changed" for m in agent.client.incoming)
    assert notice == {"sessionId": sid, "scope": "project", "batchIds": [created["batch_id"]]}

    listed = await conn.ext_method("invincat/memory/list", {"sessionId": sid})
    assert [i["content"] for i in listed["items"]] == ["Run pytest -q"]
    shown = await conn.ext_method("invincat/memory/show", {"sessionId": sid, "id": entry_id})
    assert shown["entry"]["id"] == entry_id
    # The language server's shapes (acp.md): entries carry the staleness verdict too.
    assert listed["items"][0]["stale"] is False and shown["entry"]["stale"] is False
    log = await conn.ext_method("invincat/memory/log", {"sessionId": sid, "limit": 5})
    assert log["records"][0]["batch_id"] == created["batch_id"]
    # Attribution (issue 25): the entry and the batch say who; `author` filters the log.
    author = listed["items"][0]["source"]["author"]
    assert author is not None and log["records"][0]["author"] == author
    mine = await conn.ext_method(
        "invincat/memory/log", {"sessionId": sid, "author": author["name"].upper()}
    )
    assert [r["batch_id"] for r in mine["records"]] == [created["batch_id"]]
    nobody = await conn.ext_method(
        "invincat/memory/log", {"sessionId": sid, "author": "nobody-by-this-name"}
    )
    assert nobody["records"] == []

    reverted = await conn.ext_method(
        "invincat/memory/revert", {"sessionId": sid, "batchId": created["batch_id"]}
    )
    assert not reverted["rejected"]
    await agent.client.wait_for(lambda: len(agent.client.ext_notifications) >= 2)
    listed = await conn.ext_method("invincat/memory/list", {"sessionId": sid})
    assert listed["items"] == []


async def test_bad_memory_params_are_clear_errors(agent: Agent) -> None:
    sid = agent.session_id
    for method, params, code in [
        ("invincat/memory/apply", {"sessionId": sid, "scope": "project", "operations": []}, -32602),
        ("invincat/memory/list", {"sessionId": sid, "scope": "galaxy"}, -32602),
        ("invincat/memory/show", {"sessionId": sid, "id": "mem_p_999999"}, -32015),
        ("invincat/memory/list", {}, -32602),
        ("invincat/memory/log", {"sessionId": sid, "author": ""}, -32602),
        ("invincat/memory/log", {"sessionId": sid, "author": 7}, -32602),
        ("invincat/memory/nope", {"sessionId": sid}, -32601),
    ]:
        try:
            await agent.conn.ext_method(method, params)
        except RequestError as exc:
            assert exc.code == code, (method, exc)
        else:
            raise AssertionError(f"{method} {params} succeeded")


async def test_reads_of_cited_entries_are_the_services_views(
    agent: Agent, workspace: Path, invincat_home: Path
) -> None:
    """list/show/log go through the quick reader (acp/memory.py): the same JSON as the
    service's views, stale verdicts included, for fresh, changed and missing citations."""
    from invincat_server.runtime.memory import MemoryService, views

    conn, sid = agent.conn, agent.session_id
    for name in ("a.md", "b.md", "c.md"):
        (workspace / name).write_text(f"# {name}\nthe rule in {name}\n")
    operations = [
        _create(f"Follow the rule written in {name}")
        | {"citations": [{"path": name, "start_line": 2, "end_line": 2}]}
        for name in ("a.md", "b.md", "c.md")
    ]
    created = await conn.ext_method(
        "invincat/memory/apply", {"sessionId": sid, "scope": "project", "operations": operations}
    )
    assert len(created["applied"]) == 3, created
    (workspace / "b.md").write_text("# b.md\nanother rule\n")
    (workspace / "c.md").unlink()

    full = MemoryService(invincat_home, workspace)
    listed = await conn.ext_method("invincat/memory/list", {"sessionId": sid})
    # The project's instruction files come with the list (none here), apart from the entries.
    assert listed == views.list_view(full) | {"instructions": []}
    assert [i["stale"] for i in listed["items"]] == [False, True, True]
    for item in listed["items"]:
        shown = await conn.ext_method("invincat/memory/show", {"sessionId": sid, "id": item["id"]})
        assert shown == views.show_view(full, item["id"])
    log = await conn.ext_method("invincat/memory/log", {"sessionId": sid, "limit": 5})
    assert log == {"records": views.log_view(full, None, 5)}
