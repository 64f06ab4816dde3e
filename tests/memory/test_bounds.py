"""Per-scope bounds (spec section 4.6): small configured limits and the defaults."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from invincat_server.runtime.memory import MemoryLimits, MemoryService, load_limits

from .helpers import create


def _ids_by_status(service: MemoryService, status: str) -> set[str]:
    return {e.id for e in service.list("project", include_archived=True) if e.status == status}


def test_overflow_archives_the_weakest_cold_entry(
    make_service: Callable[..., MemoryService],
) -> None:
    service = make_service(max_active=5, max_archived=2)
    ids = service.apply(
        "project",
        [create(score=20), create(score=10), create(score=50), create(score=25), create(score=90)],
    ).created_ids()
    report = service.apply("project", [create(score=60)])
    bounds = [a for a in report.applied if (a.model_extra or {}).get("by") == "bounds"]
    assert [(a.op, a.id) for a in bounds] == [("archive", ids[1])]  # score 10: the weakest cold
    assert len(_ids_by_status(service, "active")) == 5
    assert _ids_by_status(service, "archived") == {ids[1]}


def test_archived_overflow_deletes_the_oldest_archived(
    make_service: Callable[..., MemoryService],
) -> None:
    service = make_service(max_active=50, max_archived=2)
    ids = service.apply("project", [create() for _ in range(4)]).created_ids()
    for entry_id in ids[:3]:
        service.archive(entry_id, "old")
    assert _ids_by_status(service, "archived") == {ids[1], ids[2]}
    assert ids[0] not in {e.id for e in service.list("project", include_archived=True)}
    last = service.log("project", limit=1)[0]
    assert [(a.op, a.id) for a in last.applied if a.index is None] == [("delete", ids[0])]


def test_a_full_store_without_cold_entries_drops_the_surplus_creates(
    make_service: Callable[..., MemoryService],
) -> None:
    service = make_service(max_active=3, max_archived=5)
    service.apply("project", [create(score=80), create(score=50), create(score=10)])
    report = service.apply("project", [create(score=90), create(score=95)])
    assert len(report.created_ids()) == 1  # the cold entry made room for one
    assert "store is full" in report.dropped[0].reason and report.dropped[0].index == 1
    assert len(_ids_by_status(service, "active")) == 3


def test_entries_touched_by_the_batch_are_not_archived_by_its_bounds(
    make_service: Callable[..., MemoryService],
) -> None:
    service = make_service(max_active=2, max_archived=5)
    ids = service.apply("project", [create(score=5), create(score=6)]).created_ids()
    report = service.apply(
        "project",
        [
            {"op": "rescore", "scope": "project", "id": ids[0], "score": 4, "score_reason": "r"},
            create(score=10),
        ],
    )
    assert [(a.op, a.id) for a in report.applied if a.index is None] == [("archive", ids[1])]


def test_default_limits_200_active_and_50_archived(
    make_service: Callable[..., MemoryService],
) -> None:
    service = make_service()
    assert (service.limits.max_active, service.limits.max_archived) == (200, 50)
    created: list[str] = []
    for batch in range(10):
        scores = [40 + (i % 50) for i in range(20)]
        if batch == 3:
            scores[7] = 3  # the one weak cold entry
            scores[8] = 12
        created += service.apply("project", [create(score=s) for s in scores]).created_ids()
    assert len(_ids_by_status(service, "active")) == 200
    weakest = created[3 * 20 + 7]
    report = service.apply("project", [create(score=55)])  # the 201st
    assert [(a.op, a.id) for a in report.applied if a.index is None] == [("archive", weakest)]
    assert len(_ids_by_status(service, "active")) == 200

    active = sorted(_ids_by_status(service, "active"))
    for chunk in range(3):
        batch = active[chunk * 17 : (chunk + 1) * 17]
        service.apply(
            "project",
            [{"op": "archive", "scope": "project", "id": i, "reason": "r"} for i in batch],
        )
    archived = _ids_by_status(service, "archived")
    assert len(archived) == 50
    assert weakest not in archived  # the oldest archived one was deleted


def test_limits_come_from_config_toml(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[memory]\nmax_active = 7\nmax_archived = 3\n")
    assert load_limits(tmp_path) == MemoryLimits(max_active=7, max_archived=3)
    assert load_limits(tmp_path / "missing") == MemoryLimits()
