"""Stores with valid entries and one bad one, as a hand edit or a `git pull` leaves them
(issue #23 item 4). Shared by the CLI, chat, reader and language-server tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from invincat_server.runtime.memory.citation_text import text_hash

NOTES = "Run the tests with pytest -q\nLint with ruff\n"
GOOD_USER = "Prefers short answers"
GOOD_PROJECT = ("Tests run with pytest -q", "Lint with ruff before pushing")
STAMP = "2025-11-30T07:29:37.811027+00:00"


def entry(seq: int, scope: str = "project", **fields: Any) -> dict[str, Any]:
    letter = "u" if scope == "user" else "p"
    data: dict[str, Any] = {
        "id": f"mem_{letter}_{seq:06d}",
        "scope": scope,
        "section": "Testing",
        "content": f"fact number {seq}",
        "score": 85,
        "tier": "hot",
        "created_at": STAMP,
        "updated_at": STAMP,
    }
    data.update(fields)
    return data


def citation(path: Any) -> list[dict[str, Any]]:
    return [{"path": path, "start_line": 1, "end_line": 1, "sha256": "0" * 64}]


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


INVALID: dict[str, Any] = {
    "cite_number": entry(3, citations=citation(12345)),
    "cite_null": entry(3, citations=citation(None)),
    "cite_list": entry(3, citations=citation(["notes.md"])),
    "cite_object": entry(3, citations=citation({"path": "notes.md"})),
    "cite_5000_chars": entry(3, citations=citation("a" * 5000)),
    "cite_nul_byte": entry(3, citations=citation("notes.md\u0000x")),
    "content_number": entry(3, content=42),
    "content_megabytes": entry(3, content="x" * 3_000_000),
    "id_object": entry(3, id={"id": "mem_p_000003"}),
    "missing_fields": {"id": "mem_p_000003", "scope": "project"},
    "a_string": "mem_p_000003: remember this",
    "nested_deep": entry(3, notes=nested(100)),
    "nested_in_a_citation": entry(3, citations=[{**citation("notes.md")[0], "x": nested(40)}]),
    "nested_in_evidence": entry(
        3, source={"evidence": [{"tool": "t", "path": "p", "x": nested(40)}]}
    ),
    "other_scope": entry(3, scope="user"),
}
"""Each makes its entry invalid (the models refuse it), and only that entry."""

STALE: dict[str, Any] = {
    "cite_absolute": entry(3, citations=citation("/etc/passwd")),
    "cite_dotdot": entry(3, citations=citation("../outside.md")),
    "cite_symlink_out": entry(3, citations=citation("docs/link.md")),
}
"""Valid entries whose citation is refused when checked: stale, never opened (docs)."""


def good_project() -> list[dict[str, Any]]:
    cited = [{"path": "notes.md", "start_line": 1, "end_line": 1}]
    cited[0]["sha256"] = text_hash(NOTES.splitlines()[:1])
    cited[0]["anchor"] = NOTES.splitlines()[0]
    return [
        entry(1, content=GOOD_PROJECT[0], citations=cited),
        entry(2, content=GOOD_PROJECT[1]),
    ]


def store_text(scope: str, items: list[Any], next_seq: int = 4) -> str:
    """A store as invincat writes it: one entry per line."""
    head = f'{{\n  "version": 1,\n  "scope": "{scope}",\n  "next_seq": {next_seq},\n'
    lines = ",\n".join("    " + json.dumps(item) for item in items)
    return head + '  "items": [\n' + lines + "\n  ]\n}\n"


def write_stores(home: Path, project: Path, bad: Any) -> tuple[Path, Path]:
    """A user store with one valid entry; a project store with two valid entries and
    `bad` between them (index 1). Returns the two store paths."""
    (project / "notes.md").write_text(NOTES)
    # A link inside the project to a file outside it (what `cite_symlink_out` cites).
    outside = project.parent / "outside.md"
    outside.write_text(NOTES)
    (project / "docs").mkdir(exist_ok=True)
    if not (project / "docs" / "link.md").is_symlink():
        (project / "docs" / "link.md").symlink_to(outside)
    user = home / "memory_user.json"
    user.write_text(store_text("user", [entry(1, "user", content=GOOD_USER)], next_seq=2))
    store = project / ".invincat" / "memory_project.json"
    store.parent.mkdir(exist_ok=True)
    good = good_project()
    store.write_text(store_text("project", [good[0], bad, good[1]]))
    return user, store


def leftovers(store: Path) -> list[str]:
    """Files a read must never create next to the store (backups, journal, lock)."""
    return sorted(p.name for p in store.parent.iterdir() if p.name != store.name)
