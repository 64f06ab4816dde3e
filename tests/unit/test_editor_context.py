"""The editor-context block builder and @path mentions (pure logic, real files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.editor_context import (
    MAX_ATTACHMENT_CHARS,
    Attachment,
    ContextDiagnostic,
    ContextError,
    EditorContext,
    LineRange,
    build_context_block,
    find_mentions,
)
from invincat_server.runtime.policy.workspace import Workspace

SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        "".join(f"line{n} = {n}\n" for n in range(1, 31)), encoding="utf-8"
    )
    (root / "README.md").write_text("# Readme\nhello\n", encoding="utf-8")
    return Workspace(root)


def disk(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def test_selection_diagnostic_and_attachment_render_with_paths_lines_and_fences(ws: Workspace):
    app = ws.root / "src" / "app.py"
    context = EditorContext(
        active_path=app,
        language_id="python",
        selections=[Attachment(app, LineRange(9, 0, 11, 0), "selection")],
        cursor=(app, 10, 4),
        diagnostics=[
            ContextDiagnostic(
                app, LineRange(9, 0, 9, 5), '"foo" is not defined', 1, "Pylance", "E1"
            )
        ],
        attachments=[Attachment(ws.root / "README.md")],
    )
    block, labels = build_context_block(context, [], ws, disk)
    assert block.startswith("<editor_context>") and block.endswith("</editor_context>")
    assert "Active file: src/app.py (python)" in block
    assert "Cursor: src/app.py:11:5" in block
    assert (
        "Selection in src/app.py, lines 10-11:\n```python\n"
        "    10\tline10 = 10\n    11\tline11 = 11\n```" in block
    )
    assert '- src/app.py:10:1 error [Pylance E1]: "foo" is not defined' in block
    assert "Attached README.md:\n```markdown\n     1\t# Readme" in block
    assert labels == [
        "active src/app.py",
        "selection src/app.py, lines 10-11",
        "1 diagnostic",
        "attachment README.md",
    ]


def test_the_reader_decides_the_text_so_unsaved_buffers_win(ws: Workspace):
    app = ws.root / "src" / "app.py"
    context = EditorContext(selections=[Attachment(app, LineRange(0, 0, 0, 99), "selection")])
    block, _ = build_context_block(context, [], ws, lambda p: "unsaved text\n")
    assert "unsaved text" in block and "line1 = 1" not in block


def test_empty_selection_and_empty_context_add_nothing(ws: Workspace):
    app = ws.root / "src" / "app.py"
    context = EditorContext(selections=[Attachment(app, LineRange(3, 2, 3, 2), "selection")])
    assert build_context_block(context, [], ws, disk) == ("", [])
    assert build_context_block(None, [], ws, disk) == ("", [])


def test_secrets_are_redacted(ws: Workspace):
    app = ws.root / "src" / "app.py"
    context = EditorContext(selections=[Attachment(app, LineRange(0, 0, 1, 0), "selection")])
    block, _ = build_context_block(context, [], ws, lambda p: f'KEY = "{SECRET}"\n')
    assert SECRET not in block and "KEY = " in block


def test_a_file_outside_the_workspace_is_refused(ws: Workspace, tmp_path: Path):
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret\n")
    with pytest.raises(ContextError, match="outside the workspace"):
        build_context_block(EditorContext(attachments=[Attachment(outside)]), [], ws, disk)


def test_a_protected_file_is_refused(ws: Workspace):
    ws.deny = lambda path, write: "memory store" if path.name == "memory.json" else None
    store = ws.root / "memory.json"
    store.write_text("{}")
    with pytest.raises(ContextError, match="memory store"):
        build_context_block(EditorContext(attachments=[Attachment(store)]), [], ws, disk)


def test_big_attachments_are_cut_visibly(ws: Workspace):
    big = ws.root / "big.txt"
    big.write_text("x" * 80 + "\n" * 1, encoding="utf-8")
    text = "".join(f"{'y' * 79}\n" for _ in range(2000))
    block, labels = build_context_block(
        EditorContext(attachments=[Attachment(big)]), [], ws, lambda p: text
    )
    assert "[truncated: " in block and "more lines not shown]" in block
    assert len(block) < MAX_ATTACHMENT_CHARS + 1000
    assert labels == ["attachment big.txt (truncated)"]


def test_mentions_attach_existing_files_and_report_missing_ones(ws: Workspace):
    prompt = 'look at @src/app.py, @README.md and @"docs/missing file.md" and @nope/x.py'
    mentions = find_mentions(prompt, ws)
    assert [(m.text, m.path is not None) for m in mentions] == [
        ("src/app.py", True),
        ("README.md", True),
        ("docs/missing file.md", False),
        ("nope/x.py", False),
    ]
    block, labels = build_context_block(None, mentions, ws, disk)
    assert "File src/app.py (mentioned as @):" in block
    assert "@nope/x.py was not attached: no such file in the workspace." in block
    assert "not attached @docs/missing file.md" in labels


def test_emails_decorators_and_handles_are_not_mentions(ws: Workspace):
    prompt = (
        "mail foo@bar.com, use @dataclass and ask @alice; see x@src/app.py; "
        "why does @app.route('/x') or @functools.wraps fail?"
    )
    assert find_mentions(prompt, ws) == []


def test_code_in_fenced_blocks_is_not_scanned(ws: Workspace):
    prompt = "Attached x.java:\n```\n@Override\n@see docs/missing.md\n```\nand @README.md"
    assert [m.text for m in find_mentions(prompt, ws)] == ["README.md"]


def test_a_bare_name_counts_when_the_file_exists(ws: Workspace):
    (ws.root / "Makefile").write_text("all:\n")
    assert [m.text for m in find_mentions("run @Makefile.", ws)] == ["Makefile"]


def test_a_mention_outside_the_workspace_is_reported_not_read(ws: Workspace, tmp_path: Path):
    (tmp_path / "outside.txt").write_text("no")
    mentions = find_mentions("read @../outside.txt", ws)
    assert len(mentions) == 1 and mentions[0].path is None
    assert "outside the workspace" in (mentions[0].problem or "")


def test_the_whole_block_holds_its_cap_and_names_what_it_left_out(ws: Workspace):
    # Issue 23: 200 attachments of one large file gave 55,083 characters, because the
    # "not included" notes, titles, fences and diagnostics did not count.
    from invincat_server.runtime.editor_context import MAX_TOTAL_CHARS

    big = ws.root / "big.py"
    big.write_text("".join(f"value_{n} = {n}  # {'z' * 60}\n" for n in range(3000)))
    names = [ws.root / f"m{n}.py" for n in range(150)]
    for path in names:
        path.write_text("x = 1\n" * 400)
    diagnostics = [
        ContextDiagnostic(big, LineRange(n, 0, n, 4), "w " * 300, 2, "lint " * 30, "C1")
        for n in range(40)
    ]
    context = EditorContext(
        diagnostics=diagnostics,
        attachments=[Attachment(big)] * 200 + [Attachment(p) for p in names],
    )
    block, labels = build_context_block(context, [], ws, disk)
    assert len(block) <= MAX_TOTAL_CHARS
    assert block.endswith("</editor_context>")
    assert "[truncated: the context limit (40,000 characters) is reached; not included (" in block
    assert "… and " in block
    assert "Diagnostics:" in block and "more diagnostics not shown]" in block
    assert any(label.endswith("(not included: the context limit)") for label in labels), labels[:5]


def test_many_missing_files_cannot_push_the_block_past_its_cap(ws: Workspace):
    from invincat_server.runtime.editor_context import MAX_TOTAL_CHARS

    long_name = "d/" * 40 + "missing"
    attachments = [Attachment(ws.root / f"{long_name}{n}.py") for n in range(2000)]
    block, _labels = build_context_block(EditorContext(attachments=attachments), [], ws, disk)
    assert len(block) <= MAX_TOTAL_CHARS
    assert "not included (the file does not exist)" in block
    assert "is reached; not included (" in block
