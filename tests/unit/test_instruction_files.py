"""The instruction-file reader (runtime/instructions): nesting from the root down to the
working folder, CLAUDE.md's `@path` imports (cycles, depth, outside the project), the cap
on a 1 MB file, symlinks out of the project, NUL bytes, text that is not UTF-8, missing
files — one bad file costs that file only — and the stat-based re-read."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from invincat_server.runtime.config import ConfigError
from invincat_server.runtime.instructions import (
    InstructionFiles,
    InstructionSettings,
    load_instruction_settings,
    read_instructions,
    render_block,
)
from invincat_server.runtime.instructions.files import MAX_IMPORT_DEPTH
from tests.memory.credentials import credentials, leaked


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    return project


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def listed(root: Path, working_dir: Path | None = None, **settings: object) -> list[dict]:
    found = read_instructions(root, working_dir, InstructionSettings(**settings))  # type: ignore[arg-type]
    return [f.to_json() for f in found.files]


def by_path(items: list[dict]) -> dict[str, dict]:
    return {item["path"]: item for item in items}


def test_agents_md_is_read_from_the_root_down_to_the_working_folder(root: Path) -> None:
    write(root / "AGENTS.md", "root rules\n")
    write(root / "pkg" / "AGENTS.md", "pkg rules\n")
    write(root / "pkg" / "sub" / "AGENTS.md", "sub rules\n")
    write(root / "other" / "AGENTS.md", "a sibling's rules\n")  # not on the way

    items = listed(root, root / "pkg" / "sub")

    assert [i["path"] for i in items] == ["AGENTS.md", "pkg/AGENTS.md", "pkg/sub/AGENTS.md"]
    assert all(i["source"] == "AGENTS.md" and i["skipped"] is None for i in items)
    assert [i["path"] for i in listed(root)] == ["AGENTS.md"]  # the root's folder only


def test_a_working_folder_outside_the_project_counts_as_the_root(
    root: Path, tmp_path: Path
) -> None:
    write(root / "AGENTS.md", "root rules\n")
    write(tmp_path / "elsewhere" / "AGENTS.md", "not this project's\n")

    assert [i["path"] for i in listed(root, tmp_path / "elsewhere")] == ["AGENTS.md"]


def test_every_kind_in_the_configured_order_and_only_the_configured_ones(root: Path) -> None:
    for name in ("AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md", "GEMINI.md"):
        write(root / name, f"rules of {name}\n")
    write(root / "pkg" / ".github" / "copilot-instructions.md", "only the root's counts\n")

    everything = listed(root, root / "pkg")
    assert [i["path"] for i in everything] == [
        "AGENTS.md",
        "CLAUDE.md",
        ".github/copilot-instructions.md",
        "GEMINI.md",
    ]
    chosen = listed(root, files=("GEMINI.md", "AGENTS.md"))
    assert [i["path"] for i in chosen] == ["GEMINI.md", "AGENTS.md"]
    assert listed(root, files=()) == []


def test_missing_files_list_nothing_and_render_nothing(root: Path) -> None:
    found = read_instructions(root)
    assert found.files == ()
    assert render_block(found.files, found.max_bytes) == ""


def test_claude_md_imports_are_read_relative_to_the_importing_file(root: Path) -> None:
    write(root / "CLAUDE.md", "Conventions: see @docs/style.md, and @docs/missing.md.\n")
    write(root / "docs" / "style.md", "Style. Tests: @../testing/how.md\n")
    write(root / "testing" / "how.md", "Run pytest -q.\n")
    write(
        root / "docs" / "ignored.md",
        "not imported\n",
    )
    write(
        root / "pkg" / "CLAUDE.md", "```\n@docs/ignored.md in a fence\n```\n`@x` me@example.com\n"
    )

    items = listed(root, root / "pkg")

    assert [(i["path"], i["imported_by"]) for i in items] == [
        ("CLAUDE.md", None),
        ("docs/style.md", "CLAUDE.md"),
        ("testing/how.md", "docs/style.md"),
        ("pkg/CLAUDE.md", None),
    ]
    assert all(i["skipped"] is None and i["source"] == "CLAUDE.md" for i in items)


def test_an_import_cycle_is_marked_and_each_file_read_once(root: Path) -> None:
    write(root / "CLAUDE.md", "top @a.md\n")
    write(root / "a.md", "a imports @b.md\n")
    write(root / "b.md", "b imports @a.md and @CLAUDE.md\n")

    items = listed(root)

    assert [i["path"] for i in items if i["skipped"] is None] == ["CLAUDE.md", "a.md", "b.md"]
    cycles = [i for i in items if i["skipped"] and "cycle" in i["skipped"]]
    assert [(i["path"], i["imported_by"]) for i in cycles] == [
        ("a.md", "b.md"),
        ("CLAUDE.md", "b.md"),
    ]
    assert "CLAUDE.md → a.md → b.md → a.md" in cycles[0]["skipped"]
    found = read_instructions(root)
    assert "[a.md (imported by b.md) — refused: an import cycle" in render_block(
        found.files, found.max_bytes
    )


def test_imports_nest_at_most_five_deep(root: Path) -> None:
    write(root / "CLAUDE.md", "level 0 @l1.md\n")
    for level in range(1, MAX_IMPORT_DEPTH + 3):
        write(root / f"l{level}.md", f"level {level} @l{level + 1}.md\n")

    items = by_path(listed(root))

    for level in range(1, MAX_IMPORT_DEPTH + 1):
        assert items[f"l{level}.md"]["skipped"] is None
    deeper = items[f"l{MAX_IMPORT_DEPTH + 1}.md"]
    assert deeper["skipped"] == f"refused: imports nest deeper than {MAX_IMPORT_DEPTH}"
    assert f"l{MAX_IMPORT_DEPTH + 2}.md" not in items  # never opened


def test_imports_outside_the_project_are_refused_and_never_read(root: Path, tmp_path: Path) -> None:
    secret = write(tmp_path / "outside.md", "OUTSIDE TEXT\n")
    write(root / "CLAUDE.md", f"@../outside.md @{secret} @~/notes.md @.invincat/config.toml\n")
    write(root / ".invincat" / "config.toml", "model = 'x'\n")
    os.symlink(secret, root / "link.md")
    write(root / "AGENTS.md", "see @link.md (no import: not a CLAUDE.md)\n")
    with open(root / "CLAUDE.md", "a", encoding="utf-8") as fh:
        fh.write("@link.md\n")

    found = read_instructions(root)
    imports = [f.to_json() for f in found.files if f.imported_by == "CLAUDE.md"]

    outside = "refused: it leads outside the project"
    expected = [
        ("<outside project>", outside),  # ../outside.md
        ("<outside project>", outside),  # its absolute path
        ("<outside project>", "refused: it is in the home folder"),  # ~/notes.md
        (".invincat/config.toml", "refused: it is in .git/, .invincat/"),
        ("link.md", outside),  # a link inside the project: named where it is
    ]
    assert [i["path"] for i in imports] == [path for path, _ in expected]
    for item, (_, reason) in zip(imports, expected, strict=True):
        assert item["skipped"].startswith(reason), item
    assert "OUTSIDE TEXT" not in render_block(found.files, found.max_bytes)


def test_no_absolute_path_nor_home_folder_reaches_the_prompt_or_the_listing(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / "alice"
    monkeypatch.setenv("HOME", str(home))
    notes = write(home / "notes.md", "alice's notes\n")
    write(tmp_path / "outside.md", "outside\n")
    write(root / "docs" / "style.md", "style @../../outside.md\n")
    write(
        root / "CLAUDE.md",
        f"@{notes} @~/notes.md @../outside.md @{root}/docs/style.md @docs/{'x/' * 7}deep.md\n"
        + "".join(f" @n{n}.md" for n in range(40))
        + f" @{tmp_path}/the-41st.md\n",
    )
    (root / ".cursor").mkdir()
    os.symlink(home, root / ".cursor" / "rules")  # a link's target is not named either

    found = read_instructions(root)
    block = render_block(found.files, found.max_bytes)
    listing = str([f.to_json() for f in found.files])
    # What Invincat writes into the prompt around the files' own text (which is the
    # repository's, written paths and all): the headings and the bracketed notes.
    ours = "\n".join(line for line in block.splitlines() if line.startswith(("###", "[")))

    for shown in (ours, listing):
        assert str(tmp_path) not in shown and "alice" not in shown and "~/" not in shown
    imports = {f.path: f for f in found.files if f.imported_by is not None}
    assert imports["docs/style.md"].imported_by == "CLAUDE.md"  # absolute inside: relative
    assert "[<outside project> (imported by docs/style.md) — refused: it leads outside" in block
    assert "[<outside project> (imported by CLAUDE.md) — refused: it is in the home" in block
    assert "[.cursor/rules — cannot be read (is a symbolic link)]" in block


def test_a_symlink_out_of_the_project_is_refused_and_one_inside_is_read_once(
    root: Path, tmp_path: Path
) -> None:
    write(tmp_path / "theirs.md", "someone else's rules\n")
    os.symlink(tmp_path / "theirs.md", root / "GEMINI.md")
    write(root / "AGENTS.md", "our rules\n")
    os.symlink("AGENTS.md", root / "CLAUDE.md")  # the common one-file-for-all setup

    items = by_path(listed(root))

    assert items["GEMINI.md"]["skipped"].startswith("refused: it leads outside the project")
    assert items["AGENTS.md"]["skipped"] is None
    assert items["CLAUDE.md"]["skipped"] == "the same file as AGENTS.md, included once"
    found = read_instructions(root)
    block = render_block(found.files, found.max_bytes)
    assert block.count("our rules") == 1  # shown once, under both names
    assert "### source: AGENTS.md — AGENTS.md (also CLAUDE.md)\nour rules" in block
    assert "[CLAUDE.md —" not in block
    assert InstructionFiles(root).included_paths() == ["AGENTS.md", "CLAUDE.md"]


def test_a_folder_linked_out_of_the_project_is_not_followed(root: Path, tmp_path: Path) -> None:
    write(tmp_path / "other" / "AGENTS.md", "another project's rules\n")
    os.symlink(tmp_path / "other", root / "pkg")

    assert listed(root, root / "pkg") == []  # the working folder is really outside


def test_a_nul_byte_or_text_that_is_not_utf8_costs_that_file_only(root: Path) -> None:
    write(root / "AGENTS.md", b"rules\x00\x01binary")
    write(root / "CLAUDE.md", "caf\xe9 rules\n".encode("latin-1"))
    write(root / "GEMINI.md", "good rules\n")

    items = by_path(listed(root))

    assert items["AGENTS.md"]["skipped"] == "skipped: it holds a NUL byte (a binary file?)"
    assert items["CLAUDE.md"]["skipped"].startswith("skipped: it is not UTF-8 text")
    assert items["GEMINI.md"]["skipped"] is None and items["GEMINI.md"]["included"] == 11


def test_a_folder_or_fifo_named_like_an_instruction_file_is_skipped(root: Path) -> None:
    (root / "AGENTS.md").mkdir()
    os.mkfifo(root / "CLAUDE.md")  # an open must not hang on it
    write(root / "GEMINI.md", "good rules\n")

    items = by_path(listed(root))

    assert "not a regular file" in items["AGENTS.md"]["skipped"]
    assert "not a regular file" in items["CLAUDE.md"]["skipped"]
    assert items["GEMINI.md"]["skipped"] is None


def test_a_1mb_file_is_cut_at_a_line_within_the_cap_and_not_read_whole(root: Path) -> None:
    line = "Keep functions short and name them for what they do. " * 2 + "\n"
    big = write(root / "AGENTS.md", line * (1024 * 1024 // len(line) + 1))
    write(root / "GEMINI.md", "after the cap\n")

    tracemalloc.start()
    try:
        found = read_instructions(root)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    first, after = found.files
    assert first.truncated and first.size == big.stat().st_size
    assert first.included <= 32 * 1024 and first.text.endswith("\n")
    assert first.included > 32 * 1024 - len(line)  # whole lines, as many as fit
    assert after.skipped == "not read: the instruction files' cap is reached"
    assert peak < 512 * 1024, peak  # 1 MB never held at once
    block = render_block(found.files, found.max_bytes)
    assert f"[truncated: AGENTS.md has {first.size:,} bytes; the first {first.included:,}" in block
    assert "[GEMINI.md — not read: the instruction files' cap is reached]" in block


def test_a_cut_never_splits_a_line_so_a_secret_is_whole_or_absent(root: Path) -> None:
    creds = credentials()
    text = "".join(f"line {n}: {cred.text}\n" for n, cred in enumerate(creds))
    write(root / "AGENTS.md", text * 40)

    for cap in (500, 1_000, 4_096, 9_999):
        found = read_instructions(root, settings=InstructionSettings(max_bytes=cap))
        block = render_block(found.files, found.max_bytes)
        assert found.files[0].included <= cap
        assert not leaked(block, creds), (cap, leaked(block, creds))


def test_the_cap_is_shared_by_every_file(root: Path) -> None:
    write(root / "AGENTS.md", "a" * 60 + "\n")
    write(root / "CLAUDE.md", "b" * 30 + "\nsecond line\n")
    write(root / "GEMINI.md", "never reached\n")

    first, second, third = read_instructions(
        root, settings=InstructionSettings(max_bytes=100)
    ).files

    assert (first.included, first.truncated) == (61, False)
    assert (second.text, second.truncated) == ("b" * 30 + "\n", True)
    assert third.skipped == "not read: the instruction files' cap is reached"
    assert third.size == len("never reached\n")  # listed with what it misses


def test_the_block_is_labelled_by_source_and_redacted(root: Path) -> None:
    creds = credentials()
    write(root / "AGENTS.md", "Run ./scripts/test.\n" + "".join(c.text + "\n" for c in creds))
    write(root / "pkg" / "AGENTS.md", "pkg rules\n")

    found = read_instructions(root, root / "pkg")
    block = render_block(found.files, found.max_bytes)

    assert block.startswith("## Project instructions\n")
    assert "### source: AGENTS.md — AGENTS.md\nRun ./scripts/test." in block
    assert block.index("— AGENTS.md\n") < block.index("— pkg/AGENTS.md\npkg rules")
    assert not leaked(block, creds), leaked(block, creds)
    assert "[REDACTED:" in block


def test_the_renderer_reads_again_only_when_a_file_changed(root: Path) -> None:
    files = InstructionFiles(root, root / "pkg")
    (root / "pkg").mkdir()
    assert files.render() == "" and files.reads == 1
    assert files.render() == "" and files.reads == 1  # nothing there, nothing changed

    write(root / "pkg" / "AGENTS.md", "pkg rules\n")
    assert "pkg rules" in files.render() and files.reads == 2
    files.render()
    assert files.reads == 2

    write(root / "CLAUDE.md", "@imported.md\n")
    assert files.reads == 2 and "imported text" not in files.render()
    write(root / "imported.md", "imported text\n")  # a missing import is watched
    assert "imported text" in files.render() and files.reads == 4
    (root / "pkg" / "AGENTS.md").unlink()
    assert "pkg rules" not in files.render()
    assert files.included_paths() == ["CLAUDE.md", "imported.md"]


def test_too_many_imports_are_reported_not_read(root: Path) -> None:
    names = [f"f{n}.md" for n in range(40)]
    for name in names:
        write(root / name, f"{name}\n")
    write(root / "CLAUDE.md", " ".join(f"@{name}" for name in names) + "\n")

    items = listed(root)

    assert len([i for i in items if i["skipped"] is None]) == 1 + 32
    assert "has more than 32 imports" in items[-1]["skipped"]


def test_settings_come_from_the_users_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert load_instruction_settings(home) == InstructionSettings()
    (home / "config.toml").write_text(
        '[instructions]\nfiles = ["CLAUDE.md"]\nmax_bytes = 1000\n', encoding="utf-8"
    )
    assert load_instruction_settings(home) == InstructionSettings(("CLAUDE.md",), 1000)


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ('files = "AGENTS.md"', "files must be a list"),
        ('files = ["README.md"]', "'README.md' is not one of"),
        ("files = [1]", "files must be a list"),
        ("max_bytes = -1", "max_bytes must be an integer from 0"),
        ("max_bytes = 99999999", "max_bytes must be an integer from 0"),
        ('max_bytes = "32k"', "max_bytes must be an integer"),
        ("max_files = 3", "has no key 'max_files'"),
    ],
)
def test_a_bad_setting_is_one_error_naming_the_key(tmp_path: Path, table: str, named: str) -> None:
    (tmp_path / "config.toml").write_text(f"[instructions]\n{table}\n", encoding="utf-8")

    with pytest.raises(ConfigError, match="instructions") as caught:
        load_instruction_settings(tmp_path)

    assert named in str(caught.value)


def rule(root: Path, name: str, text: str) -> Path:
    return write(root / ".cursor" / "rules" / name, text)


def test_cursor_rules_are_read_as_their_frontmatter_says(root: Path) -> None:
    rule(root, "always.mdc", "---\ndescription: house style\nalwaysApply: true\n---\nAlways.\n")
    rule(root, "plain.mdc", "No frontmatter: always.\n")
    rule(root, "ts.mdc", '---\nglobs: src/**/*.ts, "*.tsx"\nalwaysApply: false\n---\n\nStrict.\n')
    rule(root, "py.mdc", "---\nglobs:\n  - '**/*.py'\n  - tests/**\n---\nPytest.\n")
    rule(root, "db.mdc", '---\ndescription: "Database migrations"\n---\nMigrate.\n')
    rule(root, "manual.mdc", "---\nalwaysApply: false\n---\nOnly when asked.\n")
    rule(root, "notes.md", "not a rule: Cursor reads .mdc files\n")
    write(root / ".cursorrules", "The legacy rules file.\n")

    found = read_instructions(root)
    items = [f.to_json() for f in found.files]
    block = render_block(found.files, found.max_bytes)

    assert [(i["source"], i["path"]) for i in items] == [
        (f".cursor/rules/{name}", f".cursor/rules/{name}")
        for name in ("always.mdc", "db.mdc", "manual.mdc", "plain.mdc", "py.mdc", "ts.mdc")
    ] + [(".cursorrules", ".cursorrules")]
    listed = by_path(items)
    # Always-applied ones and files without frontmatter: included, the frontmatter not shown.
    assert listed[".cursor/rules/always.mdc"]["included"] == len("Always.\n")
    assert "### source: .cursor/rules/always.mdc — .cursor/rules/always.mdc\nAlways." in block
    assert "house style" not in block and "alwaysApply: true" not in block
    assert "No frontmatter: always." in block and "The legacy rules file." in block
    # Scoped by globs: included, with the files they apply to.
    assert listed[".cursor/rules/ts.mdc"]["applies_to"] == "src/**/*.ts, *.tsx"
    assert listed[".cursor/rules/py.mdc"]["applies_to"] == "**/*.py, tests/**"
    assert "applies_to" not in listed[".cursor/rules/always.mdc"]
    assert (
        "— .cursor/rules/ts.mdc\n[applies only to files matching: src/**/*.ts, *.tsx]\nStrict."
    ) in block
    # Applied on request or by mention: named with how to get them, their text not shown.
    assert listed[".cursor/rules/db.mdc"]["skipped"] == (
        "not included: a Cursor rule applied on request; read the file when the task is "
        "about: Database migrations"
    )
    assert "mention @.cursor/rules/manual.mdc" in listed[".cursor/rules/manual.mdc"]["skipped"]
    assert "Migrate." not in block and "Only when asked." not in block
    assert "[.cursor/rules/db.mdc — not included" in block
    assert "notes.md" not in block


def test_cursor_rules_share_the_cap_and_only_what_is_shown_counts(root: Path) -> None:
    write(root / "AGENTS.md", "a" * 40 + "\n")
    rule(root, "a.mdc", "---\ndescription: " + "d" * 80 + "\n---\nnever shown\n")
    rule(root, "b.mdc", "---\nalwaysApply: true\n---\n" + "b" * 30 + "\n" + "c" * 30 + "\n")
    write(root / ".cursorrules", "never reached\n")

    found = read_instructions(root, settings=InstructionSettings(max_bytes=80))
    items = by_path([f.to_json() for f in found.files])

    assert items[".cursor/rules/a.mdc"]["included"] == 0  # costs none of the cap
    assert items[".cursor/rules/b.mdc"]["included"] == 31  # the frontmatter costs nothing
    assert items[".cursor/rules/b.mdc"]["truncated"] is True
    assert items[".cursorrules"]["skipped"] == "not read: the instruction files' cap is reached"


def test_cursor_rules_are_confined_to_the_project(root: Path, tmp_path: Path) -> None:
    theirs = write(tmp_path / "theirs" / "secret.mdc", "OUTSIDE RULE\n")
    (root / ".cursor").mkdir()
    os.symlink(theirs.parent, root / ".cursor" / "rules")  # the folder linked out

    found = read_instructions(root)
    (only,) = found.files
    assert (only.path, only.skipped) == (".cursor/rules", only.skipped)
    assert only.skipped is not None and only.skipped.startswith("cannot be read (is a symbolic")
    assert "secret.mdc" not in str(only.to_json())  # the folder's names are not even listed

    os.unlink(root / ".cursor" / "rules")
    rule(root, "ours.mdc", "our rule\n")
    os.symlink(theirs, root / ".cursor" / "rules" / "linked.mdc")  # a rule linked out
    found = read_instructions(root)
    items = by_path([f.to_json() for f in found.files])
    assert items[".cursor/rules/linked.mdc"]["skipped"].startswith("refused: it leads outside")
    assert items[".cursor/rules/ours.mdc"]["skipped"] is None
    assert "OUTSIDE RULE" not in render_block(found.files, found.max_bytes)


def test_a_bad_cursor_rule_costs_that_rule_only(root: Path) -> None:
    rule(root, "a.mdc", b"binary\x00rule")
    rule(root, "b\x1b[31m.mdc", "an escape in the name\n")
    rule(root, "c.mdc", "---\nglobs: *.py\nno end of the frontmatter\n")
    (root / ".cursor" / "rules" / "d.mdc").mkdir()
    rule(root, "e.mdc", "---\ndescription: \x1b]0;pwned\x07 tests\n---\nx\n")

    items = [f.to_json() for f in read_instructions(root).files]

    assert [(i["path"], i["skipped"] is None) for i in items] == [
        (".cursor/rules/a.mdc", False),
        (".cursor/rules/b\\x1b[31m.mdc", False),
        (".cursor/rules/c.mdc", True),  # unclosed: all of it is text
        (".cursor/rules/d.mdc", False),
        (".cursor/rules/e.mdc", False),
    ]
    assert "\x1b" not in str(items) and "\x07" not in str(items)
    assert items[2]["included"] == len("---\nglobs: *.py\nno end of the frontmatter\n")


def test_a_secret_in_a_cursor_rule_is_redacted_everywhere_it_is_shown(root: Path) -> None:
    creds = credentials()
    rule(root, "a.mdc", "---\ndescription: deploy with " + creds[0].text + "\n---\nx\n")
    rule(root, "b.mdc", "---\nglobs: " + creds[1].text + "\n---\nscoped\n")
    rule(root, "c.mdc", "".join(c.text + "\n" for c in creds))

    found = read_instructions(root)
    block = render_block(found.files, found.max_bytes)

    assert not leaked(block, creds), leaked(block, creds)


def test_cursor_rules_are_read_again_when_one_is_added(root: Path) -> None:
    files = InstructionFiles(root)
    rule(root, "a.mdc", "first rule\n")
    assert "first rule" in files.render()
    rule(root, "b.mdc", "second rule\n")
    assert "second rule" in files.render()
    (root / ".cursor" / "rules" / "a.mdc").unlink()
    assert "first rule" not in files.render()


def test_cursor_rules_are_configured_like_the_other_kinds(root: Path, tmp_path: Path) -> None:
    write(root / "AGENTS.md", "agents\n")
    rule(root, "a.mdc", "rule\n")
    write(root / ".cursorrules", "legacy\n")

    assert [i["path"] for i in listed(root, files=(".cursorrules", ".cursor/rules"))] == [
        ".cursorrules",
        ".cursor/rules/a.mdc",
    ]
    assert [i["path"] for i in listed(root, files=("AGENTS.md",))] == ["AGENTS.md"]
    (tmp_path / "config.toml").write_text(
        '[instructions]\nfiles = [".cursor/rules"]\n', encoding="utf-8"
    )
    assert load_instruction_settings(tmp_path).files == (".cursor/rules",)


def test_files_in_invincat_home_inside_the_project_are_never_read(root: Path) -> None:
    home = root / "tools" / "invincat-home"  # $INVINCAT_HOME kept in the repository
    write(home / "AGENTS.md", "HOME AGENTS\n")
    write(home / "config.toml", "model = 'secret-model'\n")
    write(root / "CLAUDE.md", "@tools/invincat-home/config.toml\n")
    os.symlink(home / "AGENTS.md", root / "GEMINI.md")
    write(root / "AGENTS.md", "root rules\n")

    found = read_instructions(root, home, home=home)  # working in the home folder itself
    items = [f.to_json() for f in found.files]
    block = render_block(found.files, found.max_bytes)

    refused = "refused: it is in .git/, .invincat/ or Invincat's home, not instructions"
    assert [(i["path"], i["skipped"]) for i in items] == [
        ("AGENTS.md", None),
        ("tools/invincat-home/AGENTS.md", refused),
        ("CLAUDE.md", None),
        ("tools/invincat-home/config.toml", refused),
        ("GEMINI.md", refused),
    ]
    assert "HOME AGENTS" not in block and "secret-model" not in block


def test_a_file_swapped_for_a_link_after_the_check_is_refused_and_named(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader checks a file's real path, then opens it with no link followed: a link
    put in its place between the two (here: just before the open) is refused, not read."""
    from invincat_server.runtime import private_files

    theirs = write(tmp_path / "theirs.md", "SWAPPED IN\n")
    write(root / "AGENTS.md", "our rules\n")
    rule(root, "style.mdc", "our style\n")
    write(root / "GEMINI.md", "gemini rules\n")
    open_file = private_files.open_file

    def swap_then_open(path: Path, *args: object, **kwargs: object) -> int:
        if path.name in ("AGENTS.md", "style.mdc"):
            path.unlink()
            os.symlink(theirs, path)
        return open_file(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(private_files, "open_file", swap_then_open)
    found = read_instructions(root)
    items = by_path([f.to_json() for f in found.files])
    block = render_block(found.files, found.max_bytes)

    assert items["AGENTS.md"]["skipped"] == "cannot be read (is a symbolic link)"
    assert items[".cursor/rules/style.mdc"]["skipped"] == "cannot be read (is a symbolic link)"
    assert items["GEMINI.md"]["skipped"] is None  # the others are read
    assert "SWAPPED IN" not in block and str(tmp_path) not in block
    assert "[AGENTS.md — cannot be read (is a symbolic link)]" in block
