"""Batch rules, target checks, id allocation and de-duplication (spec section 4)."""

from __future__ import annotations

import hashlib
import json

import pytest

from invincat_server.runtime.memory import BatchShapeError, MemoryService
from invincat_server.runtime.memory.ids import is_entry_id, is_numbered

from .helpers import create, journal_bytes, store_bytes


@pytest.fixture
def two(service: MemoryService) -> tuple[MemoryService, list[str]]:
    report = service.apply("project", [create(), create()])
    return service, report.created_ids()


def test_conflicting_ops_on_one_id_reject_the_whole_batch(
    two: tuple[MemoryService, list[str]],
) -> None:
    service, (first, _) = two
    before = store_bytes(service)
    report = service.apply(
        "project",
        [
            create(),
            {"op": "update", "scope": "project", "id": first, "content": "new text here"},
            {"op": "archive", "scope": "project", "id": first, "reason": "old"},
        ],
    )
    assert report.rejected and report.applied == []
    assert first in (report.reason or "")
    assert store_bytes(service) == before
    last = json.loads(journal_bytes(service).splitlines()[-1])
    assert last["rejected"] is True and last["batch_id"] == report.batch_id


def test_same_id_twice_rejects_even_if_one_op_is_malformed(
    two: tuple[MemoryService, list[str]],
) -> None:
    service, (first, _) = two
    before = store_bytes(service)
    report = service.apply(
        "project",
        [
            {"op": "update", "scope": "project", "id": first, "content": "x", "score": 3},
            {"op": "delete", "scope": "project", "id": first, "reason": "r"},
        ],
    )
    assert report.rejected
    assert store_bytes(service) == before


def test_more_than_twenty_ops_reject_the_batch(service: MemoryService) -> None:
    service.apply("project", [create()])
    before = store_bytes(service)
    report = service.apply("project", [create() for _ in range(21)])
    assert report.rejected and "at most 20" in (report.reason or "")
    assert store_bytes(service) == before
    assert not service.apply("project", [create() for _ in range(20)]).rejected


def test_batch_shape_errors_raise(service: MemoryService) -> None:
    for bad in ({"ops": []}, {"operations": {}}, "create"):
        with pytest.raises(BatchShapeError):
            service.apply("project", bad)  # type: ignore[arg-type]


def test_delete_plus_create_replacement_applies(two: tuple[MemoryService, list[str]]) -> None:
    service, (first, second) = two
    (old,) = [e for e in service.list() if e.id == first]
    report = service.apply(
        "project",
        [
            {"op": "delete", "scope": "project", "id": first, "reason": "wrong section"},
            create(section="Tooling", content=old.content),
        ],
    )
    assert [a.op for a in report.applied] == ["delete", "create"]
    (new_id,) = report.created_ids()
    entries = {e.id: e for e in service.list()}
    assert first not in entries and entries[new_id].section == "Tooling"
    assert entries[new_id].content == old.content and second in entries


def test_ids_are_never_reused_after_deleting_the_newest(service: MemoryService) -> None:
    ids = service.apply("project", [create(), create(), create()]).created_ids()
    assert all(is_entry_id(i) and i.startswith("mem_p_") and not is_numbered(i) for i in ids)
    assert ids == sorted(ids)  # time-ordered: a batch's creates in the batch's order
    service.delete(ids[2], "test")
    (fourth,) = service.apply("project", [create()]).created_ids()
    service.delete(fourth, "test")
    (fifth,) = service.apply("project", [create()]).created_ids()
    assert len({*ids, fourth, fifth}) == 5 and fifth > fourth > ids[2]
    (user_id,) = service.apply("user", [create("user")]).created_ids()
    assert user_id.startswith("mem_u_")


@pytest.mark.parametrize(
    "variant",
    [
        "use PYTEST -q to run the unit tests",
        "Use pytest -q to run the unit tests!!!",
        "To run the unit tests, use pytest -q.",
        "use   pytest -q   to run the UNIT tests",
        "Use pytest (-q) to run the unit-tests",
    ],
)
def test_near_duplicate_create_becomes_a_noop_naming_the_entry(
    service: MemoryService, variant: str
) -> None:
    (existing,) = service.apply(
        "project", [create(content="Use pytest -q to run the unit tests")]
    ).created_ids()
    before = store_bytes(service)
    report = service.apply("project", [create(content=variant)])
    (noop,) = report.applied
    assert noop.op == "noop" and noop.id == existing
    assert existing in (noop.model_extra or {})["reason"]
    assert store_bytes(service) == before


def test_distinct_facts_are_not_merged(service: MemoryService) -> None:
    report = service.apply(
        "project",
        [
            create(content="Use pytest -q to run the unit tests"),
            create(content="Use pytest -q -m slow to run the integration tests"),
        ],
    )
    assert len(report.created_ids()) == 2


def test_duplicates_within_one_batch_collapse(service: MemoryService) -> None:
    report = service.apply(
        "project",
        [create(content="Format with ruff format"), create(content="format with RUFF format.")],
    )
    assert [a.op for a in report.applied] == ["create", "noop"]
    assert report.applied[1].id == report.applied[0].id


def test_archived_or_invalid_entries_do_not_absorb_new_creates(service: MemoryService) -> None:
    (entry_id,) = service.apply("project", [create(content="Lint with flake8")]).created_ids()
    service.archive(entry_id, "switched to ruff")
    report = service.apply("project", [create(content="lint with flake8")])
    assert report.created_ids()


@pytest.mark.parametrize(
    ("op", "needle"),
    [
        ({"op": "update", "scope": "project", "id": "mem_p_000099", "content": "x"}, "no entry"),
        ({"op": "delete", "scope": "project", "id": "mem_u_000001", "reason": "r"}, "user scope"),
        (
            {"op": "restore", "scope": "project", "id": "<first>", "reason": "r"},
            "not archived",
        ),
        ({"op": "create", "scope": "user", "section": "S", "content": "c"}, "does not match"),
    ],
)
def test_target_checks_drop_impossible_ops(
    two: tuple[MemoryService, list[str]], op: dict[str, object], needle: str
) -> None:
    service, (first, _) = two
    if op.get("id") == "<first>":
        op = {**op, "id": first}
    report = service.apply("project", [op])
    assert needle in report.dropped[0].reason and report.applied == []


def test_illegal_transitions_are_refused(two: tuple[MemoryService, list[str]]) -> None:
    service, (first, _) = two
    service.archive(first, "old")
    update = service.apply(
        "project", [{"op": "update", "scope": "project", "id": first, "content": "new content"}]
    )
    assert "restore it before updating" in update.dropped[0].reason
    again = service.archive(first, "again")
    assert "already archived" in again.dropped[0].reason
    assert service.restore(first, "needed").applied[0].op == "restore"


def test_every_batch_is_journaled_with_hashes(two: tuple[MemoryService, list[str]]) -> None:
    service, _ = two
    lines = [json.loads(line) for line in journal_bytes(service).splitlines()]
    assert len(lines) == 1
    record = lines[0]
    assert record["actor"] == "cli" and record["hash_before"] is None
    assert record["proposed"][0]["op"] == "create"
    assert {a["id"] for a in record["applied"]} == set(record["after"])
    assert record["hash_after"] == hashlib.sha256(store_bytes(service)).hexdigest()
