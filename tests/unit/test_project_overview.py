"""The project's files named in the main agent's system prompt (pure logic over a real
folder and real git)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from invincat_server.runtime.agents.project_overview import MAX_FILES, project_overview


def nothing_denied(path: Path) -> bool:
    return False


def test_a_git_project_names_its_unignored_files_top_folder_first(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x")
    (tmp_path / "calc.py").write_text("x")
    (tmp_path / "build.log").write_text("x")
    (tmp_path / ".gitignore").write_text("*.log\n")
    text = project_overview(tmp_path, nothing_denied)
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert lines == ["- .gitignore", "- calc.py", "- src/app.py"]


def test_denied_files_and_unprintable_names_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("x")
    (tmp_path / "secret.json").write_text("x")
    (tmp_path / "bad\nname.py").write_text("x")
    text = project_overview(tmp_path, lambda p: p.name == "secret.json")
    assert "- ok.py" in text
    assert "secret.json" not in text and "bad" not in text


def test_a_big_project_is_cut_with_a_count_and_an_empty_one_says_nothing(
    tmp_path: Path,
) -> None:
    assert project_overview(tmp_path, nothing_denied) == ""
    for n in range(MAX_FILES + 5):
        (tmp_path / f"f{n:03}.txt").write_text("x")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "dep.js").write_text("x")
    text = project_overview(tmp_path, nothing_denied)
    assert text.count("\n- f") == MAX_FILES
    assert "… and 5 more" in text and "dep.js" not in text
