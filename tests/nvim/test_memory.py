"""The memory sidebar: entries by scope → tier, archive with its key, auto-refresh."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.deadlines import DEADLINE
from tests.nvim.harness import INVINCAT, RunNvim

CONTENT = "Run ./scripts/test before pushing"


def _create_entry(env: dict[str, str], workspace: Path) -> str:
    batch = {
        "operations": [
            {"op": "create", "scope": "project", "section": "Testing", "content": CONTENT}
        ]
    }
    done = subprocess.run(
        [str(INVINCAT), "memory", "apply", "--scope", "project", "-"],
        input=json.dumps(batch),
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=True,
    )
    [applied] = json.loads(done.stdout)["applied"]
    return str(applied["id"])


def _stored_source(env: dict[str, str], workspace: Path, entry_id: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(INVINCAT), "memory", "show", entry_id, "--json"],
        env=env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=True,
    )
    return dict(json.loads(done.stdout)["entry"]["source"])


def test_the_sidebar_lists_archives_and_follows_changes_made_elsewhere(
    nvim: RunNvim, invincat_env: dict[str, str], workspace: Path
) -> None:
    entry_id = _create_entry(invincat_env, workspace)
    result = nvim("memory", id=entry_id, content=CONTENT, invincat=str(INVINCAT))

    listed = "\n".join(result["listed"])
    assert result["sidebar_focused"]
    # The key hints fit the default width (R, <CR> and q were cut off at 48); `?` lists all.
    assert result["width"] == 48 and result["hints_fit"]
    hints = " ".join(result["listed"][1:3])
    for key in ("a archive", "u restore", "d delete", "A archived", "R refresh", "<CR>", "q close"):
        assert key in hints
    assert "? help" in hints
    assert any(line.startswith("R ") for line in result["full_help"])
    assert result["back_in_sidebar"]
    assert "▾ user  (0)\n    (no entries)\n▾ project  (1)\n  ▾ warm  (1)\n" in listed
    assert f"    ● [Testing] {CONTENT}" in result["listed"]

    # `a` archived it through governance: the store says so, and the journal says who/why.
    [stored] = result["store"]["items"]
    assert stored["id"] == entry_id and stored["status"] == "archived"
    assert result["archived_line"] == f"    ○ [Testing] {CONTENT}  (archived)"
    journal = workspace / ".invincat" / "memory_project.journal.jsonl"
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    archive = next(r for r in records if any(a["op"] == "archive" for a in r["applied"]))
    assert archive["actor"] == "user" and archive["proposed"][0]["reason"] == "moved to CI"

    # Restored with the CLI while the sidebar was open: it refreshed on didChange.
    assert result["restore_code"] == 0, result["restore_stderr"]
    assert result["restored_line"] == f"    ● [Testing] {CONTENT}"

    # <CR> on it: the entry and its journal history (create, archive, restore).
    shown = result["shown"]
    assert shown[0].startswith(f"{entry_id}  project  active  score 50 (warm)")
    assert shown[1] == f"[Testing] {CONTENT}"
    # Who proposed it (git's user.name, else the OS user), as the store records it.
    source = _stored_source(invincat_env, workspace, entry_id)
    assert shown[2].startswith(f"by {source['author']['name']}")
    history = "\n".join(shown[shown.index("History:") :])
    assert "cli  create" in history and "user  archive" in history and "restore" in history


def test_a_stale_entry_shows_a_badge_and_its_citation_opens_the_file(
    nvim: RunNvim, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "scripts").mkdir()
    deploy = workspace / "scripts" / "deploy.sh"
    deploy.write_text("#!/bin/sh\nset -e\n./build.sh --release\n")
    content = "Deploy builds with --release"
    batch = {
        "operations": [
            {
                "op": "create",
                "scope": "project",
                "section": "Deploy",
                "content": content,
                "citations": [{"path": "scripts/deploy.sh", "start_line": 3, "end_line": 3}],
            }
        ]
    }
    subprocess.run(
        [str(INVINCAT), "memory", "apply", "--scope", "project", "-"],
        input=json.dumps(batch),
        env=invincat_env,
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    deploy.write_text("#!/bin/sh\nset -e\n./build.sh --debug\n")

    result = nvim("memory_citations", content=content)

    assert result["entry_line"] == f"    ● [Deploy] {content}  ⚠ may be stale"
    assert result["citation_line"] == "      ↳ scripts/deploy.sh:3"
    assert result["opened"] == str(deploy.resolve()) or result["opened"].endswith(
        "scripts/deploy.sh"
    )
    assert result["cursor_line"] == 3 and not result["in_sidebar"]
