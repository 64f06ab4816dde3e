"""The Neovim memory sidebar shows the project's instruction files apart from the entries
(issue 25): a read-only group under the scopes, sizes and refusals as hints, and <CR>
opens a file that is shown."""

from __future__ import annotations

import os
from pathlib import Path

from tests.nvim.harness import RunNvim


def test_the_sidebar_lists_the_instruction_files_in_a_group_of_their_own(
    nvim: RunNvim, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Run ./scripts/test before pushing.\n")
    (tmp_path / "theirs.md").write_text("not ours\n")
    os.symlink(tmp_path / "theirs.md", workspace / "GEMINI.md")

    result = nvim("memory_instructions")

    listed = result["listed"]
    start = listed.index("▾ instruction files  (2, read-only)")
    assert listed[start + 1 :] == ["    ▪ AGENTS.md", "    ⚠ GEMINI.md"]
    assert listed.index("▾ project  (0)") < start
    assert "AGENTS.md · 35 bytes" in result["marks"]
    assert any(m.startswith("GEMINI.md · refused: it leads outside") for m in result["marks"])
    assert result["opened"] == str(workspace.resolve() / "AGENTS.md")
