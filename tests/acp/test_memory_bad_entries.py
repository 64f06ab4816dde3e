"""`_invincat/memory/list` and `show` over a store with one bad entry, through the real
ACP agent: the valid entries, the bad one in `invalid_entries`, nothing written (issue #23
item 4)."""

from __future__ import annotations

from pathlib import Path

from tests.acp.conftest import Agent
from tests.memory.bad_stores import GOOD_PROJECT, GOOD_USER, INVALID, leftovers, write_stores


async def test_the_memory_list_names_the_bad_entry_and_lists_the_others(
    agent: Agent, invincat_home: Path, workspace: Path
) -> None:
    conn, sid = agent.conn, agent.session_id
    stores = write_stores(invincat_home, workspace, INVALID["cite_nul_byte"])
    before = (stores[0].read_bytes(), stores[1].read_bytes())

    listed = await conn.ext_method("invincat/memory/list", {"sessionId": sid})
    assert [i["content"] for i in listed["items"]] == [GOOD_USER, *GOOD_PROJECT]
    [bad] = listed["invalid_entries"]
    assert (bad["scope"], bad["index"], bad["id"]) == ("project", 1, "mem_p_000003")
    assert "NUL byte" in bad["reason"]
    shown = await conn.ext_method("invincat/memory/show", {"sessionId": sid, "id": bad["id"]})
    assert shown["entry"] is None and shown["invalid_entry"] == bad

    assert (stores[0].read_bytes(), stores[1].read_bytes()) == before
    assert leftovers(stores[1]) == []
