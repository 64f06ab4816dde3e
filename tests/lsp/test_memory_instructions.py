"""The instruction files in the editors' memory view: `invincat/memory/list` carries them as
`instructions` (source, path, size, included, truncated, skipped, imported_by), apart from
the governed entries and never with their text; a user-scope listing has none."""

from __future__ import annotations

import os
from pathlib import Path

from tests.lsp.client import InvincatClient


async def test_memory_list_carries_the_instruction_files_apart_from_the_entries(
    lsp: InvincatClient, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Run ./scripts/test before pushing.\n")
    (workspace / "CLAUDE.md").write_text("See @docs/style.md\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "style.md").write_text("Short functions.\n")
    (tmp_path / "theirs.md").write_text("not ours\n")
    os.symlink(tmp_path / "theirs.md", workspace / "GEMINI.md")

    listed = await lsp.request("invincat/memory/list", {})

    assert listed["items"] == []
    assert listed["instructions"] == [
        {
            "source": "AGENTS.md",
            "path": "AGENTS.md",
            "size": 35,
            "included": 35,
            "truncated": False,
            "skipped": None,
            "imported_by": None,
        },
        {
            "source": "CLAUDE.md",
            "path": "CLAUDE.md",
            "size": 19,
            "included": 19,
            "truncated": False,
            "skipped": None,
            "imported_by": None,
        },
        {
            "source": "CLAUDE.md",
            "path": "docs/style.md",
            "size": 17,
            "included": 17,
            "truncated": False,
            "skipped": None,
            "imported_by": "CLAUDE.md",
        },
        {
            "source": "GEMINI.md",
            "path": "GEMINI.md",
            "size": None,
            "included": 0,
            "truncated": False,
            "skipped": "refused: it leads outside the project (a link or a path out of it)",
            "imported_by": None,
        },
    ]
    assert "instructions" not in await lsp.request("invincat/memory/list", {"scope": "user"})
    project_only = await lsp.request("invincat/memory/list", {"scope": "project"})
    assert [i["path"] for i in project_only["instructions"]][:1] == ["AGENTS.md"]
