"""The Neovim memory sidebar over a store with one bad entry (issue #23 item 4): the valid
entries are listed and the skipped one is a warning line; the store is left as it was."""

from __future__ import annotations

from pathlib import Path

from tests.memory.bad_stores import GOOD_PROJECT, INVALID, write_stores
from tests.nvim.harness import RunNvim


def test_the_sidebar_lists_the_valid_entries_and_warns_about_the_skipped_one(
    nvim: RunNvim, invincat_home: Path, workspace: Path
) -> None:
    stores = write_stores(invincat_home, workspace, INVALID["cite_nul_byte"])
    before = stores[1].read_bytes()

    result = nvim("memory_invalid", content=GOOD_PROJECT[1])

    listed = result["listed"]
    for content in GOOD_PROJECT:  # the cited one is fresh: no stale badge
        assert any(line.endswith(f"[Testing] {content}") for line in listed), listed
    [warning] = [line for line in listed if "skipped" in line]
    assert warning.startswith("⚠ project items[1] (mem_p_000003) skipped: citations.0.path")
    assert stores[1].read_bytes() == before
