"""`invincat memory list` shows the instruction files apart from governed memory: a section
of its own in text, the `instructions` key in `--json` (none with `--scope user`), read
from the root down to `--cwd`; a refused or skipped file is named with the reason, and an
import name with a terminal escape never reaches the screen."""

from __future__ import annotations

import json
from pathlib import Path

from tests.terminal.cli_process import run_invincat


def project_with_files(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("Run ./scripts/test before pushing.\n")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "AGENTS.md").write_text("x" * 50 + "\n" + "y" * 50 + "\n")
    (workspace / "CLAUDE.md").write_text("@../outside.md @\x1b]0;pwned\x07.md\n")


def test_memory_list_shows_the_instruction_files_in_a_section_of_their_own(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    project_with_files(workspace)
    (invincat_home / "config.toml").write_text("[instructions]\nmax_bytes = 120\n")

    result = run_invincat(["memory", "list", "--cwd", str(workspace / "pkg")], invincat_env)

    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("No memory entries.")
    start = lines.index(
        "Instruction files (read-only, shown to the model before memory; not governed):"
    )
    assert lines[start + 1 :] == [
        "  AGENTS.md  [source: AGENTS.md]  35 bytes",
        "  pkg/AGENTS.md  [source: AGENTS.md]  51 bytes of 102, truncated",
        "  CLAUDE.md  [source: CLAUDE.md]  not read: the instruction files' cap is reached",
    ]
    assert "\x1b" not in result.stdout


def test_memory_list_json_has_an_instructions_key_apart_from_items(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    project_with_files(workspace)

    listed = json.loads(
        run_invincat(["memory", "list", "--json", "--cwd", str(workspace)], invincat_env).stdout
    )
    user_only = json.loads(
        run_invincat(
            ["memory", "list", "--json", "--scope", "user", "--cwd", str(workspace)], invincat_env
        ).stdout
    )

    assert listed["items"] == []
    assert [(i["path"], i["imported_by"], i["skipped"]) for i in listed["instructions"]] == [
        ("AGENTS.md", None, None),
        ("CLAUDE.md", None, None),
        (
            "<outside project>",  # ../outside.md: never a path outside as written
            "CLAUDE.md",
            "refused: it leads outside the project (a link or a path out of it)",
        ),
    ]
    assert "instructions" not in user_only


def test_a_bad_instructions_setting_fails_the_listing_with_its_key(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    (invincat_home / "config.toml").write_text('[instructions]\nfiles = ["README.md"]\n')

    result = run_invincat(["memory", "list", "--cwd", str(workspace)], invincat_env)

    assert result.code == 2
    assert "[instructions] files: 'README.md' is not one of" in result.stderr


def test_memory_list_names_each_cursor_rule_by_its_own_path(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    rules = workspace / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.mdc").write_text("---\nalwaysApply: true\n---\nShort functions.\n")
    (rules / "api.mdc").write_text("---\nglobs: src/api/**/*.py\n---\nReturn JSON errors.\n")
    (rules / "db.mdc").write_text("---\ndescription: migrations\n---\nUse alembic.\n")
    (workspace / ".cursorrules").write_text("Legacy rules.\n")

    listed = json.loads(
        run_invincat(["memory", "list", "--json", "--cwd", str(workspace)], invincat_env).stdout
    )["instructions"]
    text = run_invincat(["memory", "list", "--cwd", str(workspace)], invincat_env).stdout

    assert [(i["source"], i.get("applies_to"), i["skipped"] is None) for i in listed] == [
        (".cursor/rules/api.mdc", "src/api/**/*.py", True),
        (".cursor/rules/db.mdc", None, False),
        (".cursor/rules/style.mdc", None, True),
        (".cursorrules", None, True),
    ]
    assert (
        "  .cursor/rules/api.mdc  [source: .cursor/rules/api.mdc]  20 bytes, "
        "applies to src/api/**/*.py"
    ) in text.splitlines()
    assert "read the file when the task is about: migrations" in text
