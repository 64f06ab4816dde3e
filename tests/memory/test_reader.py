"""The quick read path (runtime/memory/reader.py) gives exactly what the pydantic path
gives, or says it cannot (`NotSimple`) so the caller takes the full path.

Real stores written through governance (user + project, archived, every tier, invalid
markers, citations, journal history with reverts), plus hand edits the models accept or
refuse. The CLI's output through both paths is compared in tests/terminal."""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.memory import MemoryService, reader, views
from invincat_server.runtime.memory.citations import Citation
from invincat_server.runtime.memory.models import (
    MAX_CONTENT,
    MAX_SCORE_REASON,
    MAX_SECTION,
    READABLE_VERSIONS,
    STORE_VERSION,
    Author,
    Entry,
    Evidence,
    Source,
    tier_for,
)
from invincat_server.runtime.memory.reader import MemoryReader, NotSimple
from invincat_server.runtime.memory.report import AppliedOp, DroppedOp, JournalRecord
from tests.imports import modules_after

from .helpers import create

GIT_CONFLICT = b"<<<<<<< ours\n=======\n>>>>>>> theirs\n"


@pytest.fixture
def varied(service: MemoryService, dirs: tuple[Path, Path]) -> MemoryService:
    """Both scopes, all tiers, archived and invalid entries, a cited entry, a revert."""
    _, project = dirs
    (project / "notes.md").write_text("# Notes\nrun ./scripts/test before pushing\n")
    user = service.apply(
        "user",
        [
            create("user", section="Style", score=90, confidence="high"),
            create("user", section="Tools", score=40, score_reason="used twice"),
            create("user", section="Misc", score=10),
        ],
        thread_id="t_1",
    )
    hot, warm, _ = user.created_ids()
    service.archive(warm, "not needed any more")
    made = service.apply(
        "project",
        [
            create(section="Testing", score=75),
            create(section="Build", tier="cold"),
            create(
                section="Docs",
                score=60,
                citations=[{"path": "notes.md", "start_line": 2, "end_line": 2}],
            ),
            create(section="Wrong", score=50),
        ],
    )
    testing, _, _, wrong = made.created_ids()
    service.archive(wrong, "turned out wrong", invalid="wrong")
    edited = service.apply(
        "project", [{"op": "update", "scope": "project", "id": testing, "content": "run ruff"}]
    )
    service.revert(edited.batch_id)
    service.apply("user", [{"op": "update", "scope": "user", "id": hot, "section": "x" * 200}])
    return service


def full_and_quick(service: MemoryService, dirs: tuple[Path, Path]) -> MemoryReader:
    home, project = dirs
    return MemoryReader(home, project)


def assert_same_json(quick: Any, full: Any) -> None:
    """Equal as data and byte-for-byte as the JSON a front end writes."""
    assert quick == full
    assert json.dumps(quick, ensure_ascii=False) == json.dumps(full, ensure_ascii=False)


LIST_ARGS: list[dict[str, Any]] = [
    {"scope": "user"},
    {"scope": "user", "include_archived": True},
    {"scope": "user", "tier": "hot"},
    {"scope": "project", "tier": "cold", "include_archived": True},
    {"scope": "project", "tier": "hot"},
]


def test_views_are_identical_to_the_pydantic_path(
    varied: MemoryService, dirs: tuple[Path, Path]
) -> None:
    quick = full_and_quick(varied, dirs)
    for kwargs in LIST_ARGS:
        assert_same_json(quick.list_view(**kwargs), views.list_view(varied, **kwargs))
    for scope in (None, "user", "project"):
        for limit in (None, 1, 3, 100):
            assert_same_json(quick.log_view(scope, limit), views.log_view(varied, scope, limit))
    ids = [e.id for e in varied.list(include_archived=True)]
    assert len(ids) == 7
    for entry_id in [*ids, "mem_u_999999", "mem_p_000099"]:
        assert_same_json(quick.show_view(entry_id), views.show_view(varied, entry_id))
    quick.check_conflicts()


@pytest.fixture
def cited(service: MemoryService, dirs: tuple[Path, Path]) -> MemoryService:
    """Project entries whose citations end up fresh, moved (in the file and to another
    file), changed (edited, cut short), missing, refused (outside the project, protected
    memory data; hand edits) and one with a field a newer version added."""
    _, project = dirs
    files = {
        "fresh.md": "# Fresh\nrun ./scripts/test before pushing\n",
        "moved.py": "def build():\n    return make_all()\n",
        "renamed.txt": "the deploy key lives in the vault\n",
        "edited.md": "timeouts are 30 seconds\n",
        "short.md": "one\ntwo\nthree\n",
        "gone.md": "uses tabs for indentation\n",
    }
    ranges = {name: (1, 1) for name in files} | {"fresh.md": (1, 2), "moved.py": (1, 2)}
    ranges["short.md"] = (3, 3)
    for name, text in files.items():
        (project / name).write_text(text)
    made = service.apply(
        "project",
        [
            create(
                section=f"S{i}",
                score=50,
                citations=[{"path": name, "start_line": first, "end_line": last}],
            )
            for i, (name, (first, last)) in enumerate(ranges.items())
        ]
        + [
            create(
                section="Two",
                score=80,
                citations=[
                    {"path": "fresh.md", "start_line": 2, "end_line": 2},
                    {"path": "edited.md", "start_line": 1, "end_line": 1},
                ],
            )
        ],
    )
    assert len(made.created_ids()) == 7
    (project / "moved.py").write_text("import os\n\n" + files["moved.py"])
    (project / "renamed.txt").rename(project / "docs.txt")
    (project / "edited.md").write_text("timeouts are 60 seconds\n")
    (project / "short.md").write_text("one\n")
    (project / "gone.md").unlink()
    # Hand edits (a pull, an editor): citations the check must refuse to read, and a
    # field a newer version added; the models accept all of these.
    store = service.store_paths()["project"]
    doc = json.loads(store.read_text())
    (project.parent / "outside.md").write_text("# Fresh\n")
    doc["items"][0]["citations"].append(
        {"path": "../outside.md", "start_line": 1, "end_line": 1, "sha256": "x", "anchor": "F"}
    )
    doc["items"][1]["citations"].append(
        {"path": ".invincat/memory_project.json", "start_line": 1, "end_line": 1, "sha256": ""}
    )
    doc["items"][2]["citations"][0]["added_later"] = {"k": [1]}
    store.write_text(json.dumps(doc, indent=2))
    return service


def test_cited_entries_are_shown_as_the_pydantic_path_shows_them(
    cited: MemoryService, dirs: tuple[Path, Path]
) -> None:
    """Same `stale` and `verification` (each citation's verdict, where moved text is now,
    what changed) through the one staleness rule, without the models."""
    quick = full_and_quick(cited, dirs)
    listed = quick.list_view("project")
    assert_same_json(listed, views.list_view(cited, "project"))
    states = {e["section"]: e["verification"]["state"] for e in listed["items"]}
    assert states == {
        "S0": "stale",  # fresh.md is fresh, ../outside.md refused
        "S1": "stale",  # moved in its file, the protected store refused
        "S2": "moved",  # renamed.txt -> docs.txt
        "S3": "stale",
        "S4": "stale",
        "S5": "stale",
        "Two": "stale",
    }
    for entry in cited.list("project"):
        assert_same_json(quick.show_view(entry.id), views.show_view(cited, entry.id))
    assert_same_json(quick.list_view(), views.list_view(cited))


def test_a_cited_file_edited_between_reads_changes_the_quick_verdict(
    cited: MemoryService, dirs: tuple[Path, Path]
) -> None:
    """The reader keeps its checker (a language server's reads): cached by stat, so an
    edit is seen on the next read, and an unchanged file is not read again."""
    _, project = dirs
    quick = full_and_quick(cited, dirs)
    [two] = [e for e in cited.list("project") if e.section == "Two"]
    shown = quick.show_view(two.id)
    assert shown is not None and shown["entry"]["stale"] is True
    first = quick.list_view("project")
    checker = quick.checker()
    reads = checker.reads
    assert quick.list_view("project") == first
    assert checker.reads == reads
    (project / "edited.md").write_text("timeouts are 30 seconds\n")
    shown = quick.show_view(two.id)
    assert shown is not None and shown["entry"]["stale"] is False
    assert_same_json(shown, views.show_view(cited, two.id))


def test_unknown_fields_and_defaults_are_kept_in_order(
    service: MemoryService, dirs: tuple[Path, Path]
) -> None:
    """A newer invincat or a hand edit may add fields and omit defaults."""
    home, project = dirs
    item = {
        "zeta": [1, 2.5, {"x": None}],
        "id": "mem_u_000007",
        "scope": "user",
        "section": "Hand",
        "content": "written by hand, ünïcode kept",
        "score": 70,
        "tier": "hot",
        "created_at": "2025-01-01T00:00:00+00:00",
        "updated_at": "2025-01-01T00:00:00+00:00",
        "source": {"evidence": [{"tool": "read_file", "path": "a.py", "extra": 1}], "k": "v"},
        "alpha": "kept",
    }
    doc = {"version": 1, "scope": "user", "next_seq": 3, "note": "x", "items": [item]}
    (home / "memory_user.json").write_text(json.dumps(doc, ensure_ascii=False))
    quick = MemoryReader(home, project)
    assert_same_json(quick.list_view("user"), views.list_view(service, "user"))
    assert list(quick.list_view("user")["items"][0])[-3:] == ["zeta", "alpha", "stale"]


NOT_SIMPLE_STORES: dict[str, bytes] = {
    "not JSON": b'{"version": 1, "scope": "user", "items": [',
    "git conflict": b'{"version": 1,\n' + GIT_CONFLICT + b"}",
    "newer version": b'{"version": 3, "scope": "user", "items": []}',
    "version true": b'{"version": true, "scope": "user", "next_seq": 1, "items": []}',
    "other scope": b'{"version": 1, "scope": "project", "next_seq": 1, "items": []}',
    "latin-1": '{"version": 1, "scope": "user", "x": "é", "next_seq": 1, "items": []}'.encode(
        "latin-1"
    ),
    "NaN": b'{"version": 1, "scope": "user", "x": NaN, "next_seq": 1, "items": []}',
}


def _doc(**entry_fields: Any) -> bytes:
    item = {
        "id": "mem_u_000001",
        "scope": "user",
        "section": "S",
        "content": "c",
        "score": 50,
        "tier": "warm",
        "created_at": "t",
        "updated_at": "t",
        **entry_fields,
    }
    return json.dumps({"version": 1, "scope": "user", "next_seq": 2, "items": [item]}).encode()


NOT_SIMPLE_STORES |= {
    "score as text (coerced)": _doc(score="50"),
    "score as float (coerced)": _doc(score=50.0),
    "tier does not match": _doc(tier="hot"),
    "id of the other scope": _doc(id="mem_p_000001"),
    "id with a non-ASCII digit": _doc(id="mem_u_00000١"),
    "section too long": _doc(section="x" * (MAX_SECTION + 1)),
    "empty content": _doc(content=""),
    "unknown status": _doc(status="deleted"),
    "too many citations": _doc(
        citations=[{"path": "a", "start_line": 1, "end_line": 1, "sha256": ""}] * 6
    ),
    "evidence without a tool": _doc(source={"evidence": [{"path": "a"}]}),
}


@pytest.mark.parametrize("name", sorted(NOT_SIMPLE_STORES))
def test_a_store_the_reader_cannot_vouch_for_takes_the_full_path(
    name: str, service: MemoryService, dirs: tuple[Path, Path]
) -> None:
    home, project = dirs
    (home / "memory_user.json").write_bytes(NOT_SIMPLE_STORES[name])
    quick = MemoryReader(home, project)
    for call in (
        lambda: quick.list_view("user"),
        lambda: quick.show_view("mem_u_000001"),
        quick.check_conflicts,
    ):
        with pytest.raises(NotSimple):
            call()


def test_two_entries_with_one_id_take_the_full_path(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    doc = json.loads(_doc())
    doc["items"] *= 2
    (home / "memory_user.json").write_text(json.dumps(doc))
    with pytest.raises(NotSimple):
        MemoryReader(home, project).list_view()


@pytest.mark.parametrize(
    "damage",
    [
        b'{"batch_id": "b_torn", "time": "2025',  # a writer died mid-line
        GIT_CONFLICT,
        b'{"batch_id": "b", "time": "t", "scope": "user", "actor": "x", "rejected": "no"}',
        b'{"batch_id": "b", "time": "t", "scope": "user", "actor": "x", "dropped": [{}]}',
    ],
)
def test_a_damaged_journal_takes_the_full_path(
    damage: bytes, varied: MemoryService, dirs: tuple[Path, Path]
) -> None:
    journal = varied.files["user"].journal
    with journal.open("ab") as fh:
        fh.write(damage + b"\n")
    quick = full_and_quick(varied, dirs)
    with pytest.raises(NotSimple):
        quick.log_view()
    with pytest.raises(NotSimple):
        quick.log_view("user", 1)
    quick.log_view("project")  # the other scope is fine
    if damage == GIT_CONFLICT:
        with pytest.raises(NotSimple):
            quick.check_conflicts("user")


def test_the_readers_limits_are_the_models() -> None:
    """The hand-written checks must not drift from the validator of record."""
    assert (reader.MAX_SECTION, reader.MAX_CONTENT, reader.MAX_SCORE_REASON) == (
        MAX_SECTION,
        MAX_CONTENT,
        MAX_SCORE_REASON,
    )
    assert reader.READABLE_VERSIONS == READABLE_VERSIONS and STORE_VERSION in READABLE_VERSIONS
    assert all(reader.tier_for(score) == tier_for(score) for score in range(101))
    for fields, model in (
        (reader.ENTRY_FIELDS, Entry),
        (reader.SOURCE_FIELDS, Source),
        (reader.AUTHOR_FIELDS, Author),
        (reader.EVIDENCE_FIELDS, Evidence),
        (reader.CITATION_FIELDS, Citation),
        (reader.RECORD_FIELDS, JournalRecord),
        (reader.APPLIED_FIELDS, AppliedOp),
        (reader.DROPPED_FIELDS, DroppedOp),
    ):
        assert [name for name, _, _ in fields] == list(model.model_fields), model
    schema = Entry.model_json_schema()
    props = schema["properties"]
    assert props["citations"]["maxItems"] == reader.MAX_CITATIONS
    citation = schema["$defs"]["Citation"]["properties"]
    assert citation["path"]["maxLength"] == 500 and citation["anchor"]["maxLength"] == 1000
    evidence = schema["$defs"]["Evidence"]["properties"]
    assert evidence["tool"]["maxLength"] == 64 and evidence["path"]["maxLength"] == 500


def test_the_reader_imports_no_pydantic() -> None:
    loaded = modules_after("from invincat_server.runtime.memory.reader import MemoryReader")
    heavy = [
        m
        for m in loaded
        if m.split(".")[0] in ("pydantic", "pydantic_core")
        or m.endswith(("memory.models", "memory.service"))
    ]
    assert heavy == []


def test_reads_during_concurrent_writes_see_whole_versions(
    service: MemoryService, dirs: tuple[Path, Path]
) -> None:
    """Like the full path, the reader takes no lock: a writer replaces the store atomically,
    so every read sees one whole version (never a half-written store), and a journal line
    being appended at that moment makes the read take the full path, never a wrong one."""
    home, project = dirs
    quick = MemoryReader(home, project)
    done = threading.Event()

    def write() -> None:
        try:
            for _ in range(40):
                service.apply("user", [create("user")])
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    seen: list[str] = []
    logged: list[str] = []
    reads = 0
    while not done.is_set() or reads == 0:
        ids = [e["id"] for e in quick.list_view("user")["items"]]
        assert ids[: len(seen)] == seen  # store order: later versions only append
        seen = ids
        with contextlib.suppress(NotSimple):  # a line being appended: the full path reads it
            # The journal line follows its store write, so the log may lag the store.
            batches = [r["batch_id"] for r in reversed(quick.log_view("user"))]
            assert batches[: len(logged)] == logged
            logged = batches
        reads += 1
    writer.join(timeout=60)
    assert len(quick.list_view("user")["items"]) == 40
    assert_same_json(quick.log_view("user"), views.log_view(service, "user"))
