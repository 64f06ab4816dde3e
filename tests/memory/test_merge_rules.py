"""The merge driver's rules on parsed stores (merge.py), and its refusal of bad sides
(merge_driver.py) on real files: each bad input refuses the merge, journals nothing and
leaves ours' file as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.memory.changeset import BatchContext
from invincat_server.runtime.memory.dedupe import normalise
from invincat_server.runtime.memory.limits import MemoryLimits
from invincat_server.runtime.memory.merge import merge_states
from invincat_server.runtime.memory.merge_driver import (
    STORE_PATH,
    MergeRefused,
    MergeSides,
    leave_conflicted,
    merge_store_files,
)
from invincat_server.runtime.memory.models import Entry
from invincat_server.runtime.memory.store import StoreState, dump_state, parse_store

from .credentials import credentials

T0, T1, T2 = (f"2026-01-0{d}T00:00:00.000000+00:00" for d in (1, 2, 3))


def entry(entry_id: str, content: str, updated: str = T0, **fields: Any) -> Entry:
    return Entry.model_validate(
        {
            "id": entry_id,
            "scope": "project",
            "section": "Testing",
            "content": content,
            "score": 50,
            "tier": "warm",
            "created_at": T0,
            "updated_at": updated,
            **fields,
        }
    )


def state(*entries: Entry) -> StoreState:
    return StoreState("project", entries={e.id: e for e in entries})


def merge(base: StoreState, ours: StoreState, theirs: StoreState) -> tuple[StoreState, Any]:
    ctx = BatchContext("b_test", "project", "merge", T2)
    outcome = merge_states(base, ours, theirs, ctx, MemoryLimits())
    return outcome.state, outcome


A = entry("mem_p_000001", "run the tests with pytest -x")
B = entry("mem_p_000002", "lint with ruff check")


def test_a_change_on_one_side_is_taken_and_untouched_entries_stay() -> None:
    changed = A.model_copy(
        update={"content": "run the tests with ./scripts/test", "updated_at": T1}
    )
    merged, outcome = merge(state(A, B), state(A, B), state(changed, B))
    assert merged.entries["mem_p_000001"] == changed and merged.entries["mem_p_000002"] == B
    assert outcome.before == {"mem_p_000001": A.to_json()}  # revertable: ours' version


def test_changed_on_both_sides_the_later_updated_at_wins_and_the_loser_is_journaled() -> None:
    ours = A.model_copy(update={"content": "ours' wording of the test command", "updated_at": T1})
    theirs = A.model_copy(update={"content": "theirs' wording of the command", "updated_at": T2})
    merged, outcome = merge(state(A), state(ours), state(theirs))
    assert merged.entries[A.id] == theirs
    (applied,) = outcome.applied
    assert applied.model_extra["lost"] == ours.to_json()
    # The other way round (and a tie) keeps ours.
    merged, outcome = merge(state(A), state(theirs), state(ours))
    assert merged.entries[A.id] == theirs and outcome.applied[0].op == "keep"
    tie = ours.model_copy(update={"updated_at": T2})
    merged, _ = merge(state(A), state(theirs), state(tie))
    assert merged.entries[A.id] == theirs


def test_a_change_beats_a_delete_on_either_side() -> None:
    changed = A.model_copy(update={"content": "run pytest -x -q before pushing", "updated_at": T1})
    merged, outcome = merge(state(A, B), state(B), state(changed, B))  # ours deleted
    assert merged.entries[A.id] == changed
    assert outcome.applied[0].model_extra["lost"] == "deleted by ours"
    merged, outcome = merge(state(A, B), state(changed, B), state(B))  # theirs deleted
    assert merged.entries[A.id] == changed and not outcome.changed
    merged, _ = merge(state(A, B), state(A, B), state(B))  # an unchanged entry: deleted
    assert A.id not in merged.entries


def test_the_same_id_created_on_both_sides_keeps_both_with_a_new_id_for_theirs() -> None:
    ours = entry("mem_p_000003", "the API lives in src/api")
    theirs = entry("mem_p_000003", "deployments go through the release branch")
    merged, outcome = merge(state(A), state(A, ours), state(A, theirs))
    contents = sorted(e.content for e in merged.entries.values())
    assert contents == sorted([A.content, ours.content, theirs.content])
    assert merged.entries["mem_p_000003"] == ours
    created = [a for a in outcome.applied if a.op == "create"]
    assert [a.model_extra["reid_from"] for a in created] == ["mem_p_000003"]
    assert created[0].id not in ("mem_p_000001", "mem_p_000003")
    parse_store(dump_state(merged), "project")  # a valid store: ids unique


def test_near_duplicate_creates_across_sides_are_one_fact() -> None:
    ours = entry("mem_p_000003", "Lint with ruff check")
    theirs = entry("mem_p_000003", "lint with RUFF check.")
    other_id = entry("mem_p_000004", "lint, with ruff: check")
    merged, outcome = merge(state(A), state(A, ours), state(A, theirs, other_id))
    assert [e.content for e in merged.entries.values()] == [A.content, ours.content]
    assert [a.op for a in outcome.applied] == ["noop", "noop"]
    assert all(a.id == "mem_p_000003" for a in outcome.applied)


def test_a_near_duplicate_of_a_reided_create_names_the_entry_under_its_new_id() -> None:
    # Two older stores, numbered per clone: both created mem_p_000003 and mem_p_000004.
    ours = [
        entry("mem_p_000003", "the API lives in src/api"),
        entry("mem_p_000004", "migrations go in db/migrations"),
    ]
    theirs = [
        entry("mem_p_000003", "deployments go through the release branch"),
        entry("mem_p_000004", "Deployments go through the release branch!"),
    ]
    merged, outcome = merge(state(A), state(A, *ours), state(A, *theirs))
    facts = sorted(normalise(e.content) for e in merged.entries.values())
    assert facts == sorted(
        normalise(c) for c in (A.content, *(e.content for e in ours), theirs[0].content)
    )
    parse_store(dump_state(merged), "project")  # a valid store: ids unique
    (reid,) = [a for a in outcome.applied if a.op == "create"]
    assert reid.model_extra["reid_from"] == "mem_p_000003"
    assert merged.entries[reid.id].content == theirs[0].content
    # The near-duplicate names the entry that holds the fact, not ours' mem_p_000003.
    (noop,) = [a for a in outcome.applied if a.op == "noop"]
    assert noop.id == reid.id and reid.id in noop.model_extra["reason"]
    assert noop.model_extra["lost"] == theirs[1].to_json()


def test_an_archived_create_is_not_deduplicated_and_ids_are_opaque() -> None:
    # Ids in no particular order, and not numbered the way today's allocator numbers them.
    odd = [entry(f"mem_p_{n:06d}", f"fact number {n} about module m{n}") for n in (907, 12, 500)]
    archived = entry("mem_p_000042", A.content, status="archived", archived_at=T1)
    merged, _ = merge(state(), state(odd[0]), state(odd[1], odd[2], archived))
    assert list(merged.entries) == ["mem_p_000907", "mem_p_000012", "mem_p_000500", "mem_p_000042"]


# -- the driver on files -------------------------------------------------------------
def _store(*entries: Entry) -> bytes:
    return dump_state(state(*entries))


def _sides(tmp_path: Path, base: bytes, ours: bytes, theirs: bytes) -> MergeSides:
    paths = []
    for name, data in (("O", base), ("A", ours), ("B", theirs)):
        path = tmp_path / f".merge_file_{name}"
        path.write_bytes(data)
        paths.append(path)
    return MergeSides(*paths, name=STORE_PATH)


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "repo", tmp_path / "home"
    (root / ".git").mkdir(parents=True)
    home.mkdir()
    return root, home


def test_a_merge_is_journaled_as_actor_merge_and_written_to_ours(tmp_path: Path) -> None:
    root, home = _project(tmp_path)
    sides = _sides(tmp_path, _store(A), _store(A), _store(A, B))
    done = merge_store_files(root, home, sides)
    assert sides.ours.read_bytes() == done.result
    assert list(parse_store(done.result, "project").entries) == [A.id, B.id]
    (line,) = (root / ".invincat" / "memory_project.journal.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["actor"] == "merge" and record["after"] == {B.id: B.to_json()}


def _bad_theirs() -> dict[str, bytes]:
    good = json.loads(_store(A))
    secret = credentials()[0]

    def with_item(item: object) -> bytes:
        return json.dumps({**good, "items": [*good["items"], item]}).encode()

    return {
        "not JSON": b"{not json",
        "not UTF-8": b"\xff\xfe{}",
        "a list": b"[]",
        "wrong type": with_item({**B.to_json(), "content": 7}),
        "missing field": with_item({k: v for k, v in B.to_json().items() if k != "content"}),
        "NUL byte": with_item({**B.to_json(), "content": "a\x00b", "id": "mem_p_0000\x002"}),
        "huge value": with_item({**B.to_json(), "content": "x" * 2_000_000}),
        "tier contradicts score": with_item({**B.to_json(), "tier": "hot"}),
        "an id twice": with_item(A.to_json()),
        "another scope": json.dumps({**good, "scope": "user"}).encode(),
        "newer format": json.dumps({**good, "version": 9}).encode(),
        "conflict markers": b"<<<<<<< HEAD\n" + _store(A) + b"=======\n>>>>>>> x\n",
        "a secret": with_item({**B.to_json(), "content": f"deploy key {secret.text}"}),
        "a secret in an unknown field": with_item({**B.to_json(), "note": secret.text}),
    }


@pytest.mark.parametrize("case", list(_bad_theirs()))
def test_a_bad_side_refuses_the_merge_and_journals_nothing(tmp_path: Path, case: str) -> None:
    root, home = _project(tmp_path)
    theirs = _bad_theirs()[case]
    sides = _sides(tmp_path, _store(A), _store(A), theirs)
    with pytest.raises(MergeRefused) as refused:
        merge_store_files(root, home, sides)
    assert "theirs' version" in str(refused.value) or "theirs' entry" in str(refused.value)
    assert sides.ours.read_bytes() == _store(A)
    assert not (root / ".invincat").exists()  # no journal, no lock, nothing created
    for cred in credentials()[:1]:
        assert cred.secret not in str(refused.value)
    # What git is left with: both sides whole between markers, refused by every command.
    assert leave_conflicted(sides, refused.value)
    theirs_lines = theirs if theirs.endswith(b"\n") else theirs + b"\n"
    assert sides.ours.read_bytes() == (
        b"<<<<<<< ours\n" + _store(A) + b"=======\n" + theirs_lines + b">>>>>>> theirs\n"
    )


def test_a_symlinked_side_or_another_path_is_refused(tmp_path: Path) -> None:
    root, home = _project(tmp_path)
    sides = _sides(tmp_path, _store(A), _store(A), _store(A, B))
    target = tmp_path / "elsewhere.json"
    target.write_bytes(_store(A, B))
    os.unlink(sides.theirs)
    os.symlink(target, sides.theirs)
    with pytest.raises(MergeRefused, match="cannot read theirs"):
        merge_store_files(root, home, sides)
    other = MergeSides(sides.base, sides.ours, sides.theirs, name="src/app.py")
    with pytest.raises(MergeRefused, match=r"only \.invincat/memory_project\.json"):
        merge_store_files(root, home, other)
    assert not (root / ".invincat").exists()


def test_both_sides_adding_the_store_merge_against_an_empty_base(tmp_path: Path) -> None:
    # git hands an empty %O when the file has no common ancestor.
    root, home = _project(tmp_path)
    theirs = entry("mem_p_000001", "deployments go through the release branch")
    sides = _sides(tmp_path, b"", _store(A), _store(theirs))
    done = merge_store_files(root, home, sides)
    merged = parse_store(done.result, "project")
    assert sorted(e.content for e in merged.entries.values()) == sorted([A.content, theirs.content])
    assert len(merged.entries) == 2


def test_a_side_over_the_size_bound_is_refused_unread(tmp_path: Path) -> None:
    root, home = _project(tmp_path)
    sides = _sides(tmp_path, _store(A), _store(A), b"")
    os.truncate(sides.theirs, 65 * 2**20)  # sparse: the bound is checked before reading
    with pytest.raises(MergeRefused, match="larger than 64 MiB") as refused:
        merge_store_files(root, home, sides)
    assert sides.ours.read_bytes() == _store(A)
    # Not read whole, so not copied between markers either: %A stays as git gave it.
    assert not leave_conflicted(sides, refused.value)
    assert sides.ours.read_bytes() == _store(A)
