"""`invincat/memory/list` and `verify` over a store with one bad entry, through the real
language server: the valid entries are listed, the bad one is named in `invalid_entries`
(index, printable id, reason), and the store is byte for byte the same (issue #23 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lsp.client import InvincatClient
from tests.memory.bad_stores import GOOD_PROJECT, GOOD_USER, INVALID, leftovers, write_stores


@pytest.mark.parametrize("kind", ["cite_number", "cite_nul_byte", "a_string", "id_object"])
async def test_the_memory_view_lists_the_valid_entries_and_flags_the_bad_one(
    lsp: InvincatClient, invincat_home: Path, workspace: Path, kind: str
) -> None:
    stores = write_stores(invincat_home, workspace, INVALID[kind])
    before = (stores[0].read_bytes(), stores[1].read_bytes())

    listed = await lsp.request("invincat/memory/list", {"includeArchived": True})
    assert [e["content"] for e in listed["items"]] == [GOOD_USER, *GOOD_PROJECT]
    [bad] = listed["invalid_entries"]
    assert (bad["scope"], bad["index"]) == ("project", 1) and bad["reason"]
    assert bad["id"] == (None if kind in ("a_string", "id_object") else "mem_p_000003")

    verified = await lsp.request("invincat/memory/verify", {})
    assert verified["invalid"] == 1 and verified["invalid_entries"] == [bad]
    assert [e["id"] for e in verified["entries"]] == ["mem_p_000001"]
    assert verified["entries"][0]["state"] == "fresh"

    assert (stores[0].read_bytes(), stores[1].read_bytes()) == before
    assert leftovers(stores[1]) == []
