"""The store's one git-friendly layout (issue 25): entries in id order, one per line, the
comma first, fixed key order and a final newline; shown with real git that additions on
two branches touch only their own new lines and that a change and an addition merge."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from invincat_server.runtime.memory.ids import new_id
from invincat_server.runtime.memory.models import Entry
from invincat_server.runtime.memory.store import StoreState, dump_state, parse_store

from .bad_stores import entry
from .gitrepo import Repo, needs_git

MARKERS = (b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||")


def _entry(entry_id: str, content: str) -> Entry:
    fields = entry(1, content=content)
    return Entry.model_validate({**fields, "id": entry_id})


def test_the_layout_is_one_predictable_text_whatever_order_entries_come_in() -> None:
    newer, newest = new_id("project"), new_id("project")
    entries = [
        _entry(newest, "third"),
        _entry("mem_p_000002", "first"),
        _entry(newer, "second é"),
    ]
    state = StoreState("project", {e.id: e for e in entries}, {"team": "core", "next_seq": 9})
    data = dump_state(state)
    reordered = StoreState("project", {e.id: e for e in reversed(entries)}, dict(state.extra))
    assert dump_state(reordered) == data  # the same entries: the same bytes
    lines = data.decode("utf-8").split("\n")
    assert lines[:5] == [
        "{",
        '  "version": 2,',
        '  "scope": "project",',
        '  "team": "core",',
        '  "items": [',
    ]
    assert lines[5].startswith('    {"id":"mem_p_000002","scope":"project","section":')
    assert lines[6].startswith(f'  , {{"id":"{newer}",') and "second é" in lines[6]
    assert lines[7].startswith(f'  , {{"id":"{newest}",')
    assert lines[8:] == ["  ]", "}", ""]  # a final newline, and nothing else
    assert list(parse_store(data, "project").entries) == ["mem_p_000002", newer, newest]
    assert dump_state(StoreState("project")).endswith(b'  "items": []\n}\n')


def test_a_write_leaves_the_store_in_id_order_as_a_fresh_read_lists_it(tmp_path: Path) -> None:
    from invincat_server.runtime.memory import MemoryService

    from .bad_stores import store_text
    from .helpers import create

    project = tmp_path / "project"
    (project / ".invincat").mkdir(parents=True)
    store = project / ".invincat" / "memory_project.json"
    # A hand edit (or an older version) left the entries out of order.
    store.write_text(store_text("project", [entry(5), entry(2)], next_seq=6))
    service = MemoryService(tmp_path / "home", project)
    (created,) = service.apply("project", [create()]).created_ids()
    order = ["mem_p_000002", "mem_p_000005", created]
    assert [e.id for e in service.list()] == order
    assert [e.id for e in MemoryService(tmp_path / "home", project).list()] == order
    assert [item["id"] for item in json.loads(store.read_text())["items"]] == order


def _shared(tmp_path: Path, *contents: str) -> tuple[Repo, Repo, list[str]]:
    """A repository whose committed store holds `contents`, and a teammate's clone."""
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    ids = [repo.remember(content) for content in contents]
    repo.git("add", ".invincat")
    repo.git("commit", "-q", "-m", "shared memory")
    return repo, repo.clone(repo.root.with_name("other")), ids


def _change(repo: Repo, *args: str, message: str) -> None:
    done = repo.memory(*args)
    assert done.returncode == 0, done.stderr
    repo.git("commit", "-q", "-am", message)


def _numstat(repo: Repo, since: str, until: str) -> tuple[str, str]:
    """(lines added, lines removed) in the store between two commits."""
    path = str(repo.store.relative_to(repo.root))
    added, removed, _ = repo.git("diff", "--numstat", since, until, "--", path).stdout.split("\t")
    return added, removed


def _sides(conflicted: bytes) -> tuple[list[bytes], list[bytes]]:
    """The lines of each side of the one conflict in `conflicted`."""
    lines = conflicted.split(b"\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(b"<<<<<<<"))
    middle = next(i for i, line in enumerate(lines) if line.startswith(b"======="))
    end = next(i for i, line in enumerate(lines) if line.startswith(b">>>>>>>"))
    return lines[start + 1 : middle], lines[middle + 1 : end]


@needs_git
def test_additions_on_two_branches_touch_only_their_own_new_lines(tmp_path: Path) -> None:
    repo, other, base = _shared(tmp_path, "Run make test before pushing", "Format with ruff")
    feature = other.remember("The API lives in src/api")
    other.git("commit", "-q", "-am", "feature memory")
    main = repo.remember("Migrations go in db/migrations")
    repo.git("commit", "-q", "-am", "main memory")
    repo.git("fetch", "-q", str(other.root), "main:feature")

    # Each side's diff of the store is one added line; no line of the base changed.
    assert _numstat(repo, "HEAD~1", "HEAD") == ("1", "0")
    assert _numstat(repo, "HEAD~1", "feature") == ("1", "0")

    # Both go at the end (newer ids sort last), so git cannot order them by itself: the
    # conflict holds exactly the two new lines, and a union merge is a valid store.
    path = str(repo.store.relative_to(repo.root))
    stages = {
        n: repo.git("show", f"{rev}:{path}").stdout.encode()
        for n, rev in ((1, "HEAD~1"), (2, "HEAD"), (3, "feature"))
    }
    assert repo.git("merge", "feature", check=False).returncode != 0
    conflicted = repo.store.read_bytes()
    ours, theirs = _sides(conflicted)
    assert [line.split(b'"')[3].decode() for line in ours] == [main]
    assert [line.split(b'"')[3].decode() for line in theirs] == [feature]
    # Keeping both sides is deleting git's three marker lines.
    kept = [line for line in conflicted.split(b"\n") if not line.startswith(MARKERS)]
    merged = b"\n".join(kept)
    union = _merge_file(tmp_path, stages, "--union")
    assert union.returncode == 0
    assert set(parse_store(union.stdout, "project").entries) == {*base, feature, main}
    assert set(parse_store(merged, "project").entries) == {*base, feature, main}
    repo.store.write_bytes(merged)
    repo.git("add", path)
    assert len(repo.contents()) == 4
    # The next write puts the store back in id order.
    after = repo.remember("After the merge")
    written = [item["id"] for item in json.loads(repo.store.read_text())["items"]]
    assert written == [*base, *sorted([feature, main]), after]


def _merge_file(
    tmp_path: Path, stages: dict[int, bytes], *options: str
) -> subprocess.CompletedProcess[bytes]:
    names = {1: "base.json", 2: "ours.json", 3: "theirs.json"}
    for number, name in names.items():
        (tmp_path / name).write_bytes(stages[number])
    return subprocess.run(
        ["git", "merge-file", "-p", *options, names[2], names[1], names[3]],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )


@needs_git
def test_a_change_on_one_branch_and_an_addition_on_the_other_merge_cleanly(
    tmp_path: Path,
) -> None:
    repo, other, (first, second) = _shared(
        tmp_path, "Run make test before pushing", "Format with ruff"
    )
    added = other.remember("The API lives in src/api")
    other.git("commit", "-q", "-am", "feature memory")
    _change(repo, "archive", first, "--reason", "moved to CI", message="main memory")
    repo.git("fetch", "-q", str(other.root), "main:feature")
    merged = repo.git("merge", "--no-edit", "feature", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    listed = json.loads(repo.memory("list", "--all", "--json").stdout)["items"]
    assert {e["id"]: e["status"] for e in listed} == {
        first: "archived",
        second: "active",
        added: "active",
    }


@needs_git
def test_changes_to_two_entries_on_two_branches_merge_cleanly(tmp_path: Path) -> None:
    repo, other, (first, _, third) = _shared(
        tmp_path, "Run make test before pushing", "Format with ruff", "Docs live in docs/"
    )
    _change(other, "archive", third, "--reason", "obsolete", message="feature memory")
    _change(repo, "archive", first, "--reason", "moved to CI", message="main memory")
    repo.git("fetch", "-q", str(other.root), "main:feature")
    merged = repo.git("merge", "--no-edit", "feature", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    listed = json.loads(repo.memory("list", "--all", "--json").stdout)["items"]
    assert [e["status"] for e in listed] == ["archived", "active", "archived"]
