"""The operation-field matrix (spec section 3), cell by cell."""

from __future__ import annotations

from typing import Any

import pytest

from invincat_server.runtime.memory import MemoryService

from .helpers import create, store_bytes

TS = "2020-01-01T00:00:00+00:00"
# (op, forbidden field, value): every "must not carry" cell of the matrix.
FORBIDDEN = [
    ("create", "id", "mem_p_000099"),
    ("create", "status", "archived"),
    ("create", "created_at", TS),
    ("create", "updated_at", TS),
    ("create", "last_scored_at", TS),
    ("create", "archived_at", TS),
    ("update", "section", "Other"),
    ("update", "status", "archived"),
    ("update", "score", 90),
    ("update", "tier", "hot"),
    ("rescore", "content", "new content"),
    ("rescore", "section", "Other"),
    ("archive", "content", "new content"),
    ("restore", "content", "new content"),
    ("delete", "content", "x"),
    ("delete", "section", "x"),
    ("delete", "score", 5),
    ("delete", "tier", "cold"),
    ("delete", "confidence", "low"),
    ("delete", "invalid", "wrong"),
    ("delete", "score_reason", "x"),
]


def _valid(op: str, entry_id: str) -> dict[str, Any]:
    """A minimal valid op of each kind against `entry_id`."""
    base: dict[str, Any] = {"op": op, "scope": "project"}
    if op == "create":
        return create()
    base["id"] = entry_id
    extra: dict[str, dict[str, Any]] = {
        "update": {"content": "changed content of the entry"},
        "rescore": {"score": 40, "score_reason": "seen again"},
        "archive": {"reason": "stale"},
        "restore": {"reason": "needed again"},
        "delete": {"reason": "wrong"},
    }
    return base | extra[op]


@pytest.fixture
def seeded(service: MemoryService) -> tuple[MemoryService, str, str]:
    """An active and an archived entry."""
    report = service.apply("project", [create(), create()])
    active, archived = report.created_ids()
    service.archive(archived, "for restore tests")
    return service, active, archived


@pytest.mark.parametrize(("op", "field", "value"), FORBIDDEN)
def test_forbidden_field_drops_the_op_with_a_reason(
    seeded: tuple[MemoryService, str, str], op: str, field: str, value: object
) -> None:
    service, active, archived = seeded
    target = archived if op == "restore" else active
    before = store_bytes(service)
    proposal = _valid(op, target) | {field: value}
    report = service.apply("project", [proposal])
    assert not report.rejected
    assert report.applied == []
    assert len(report.dropped) == 1
    dropped = report.dropped[0]
    assert dropped.index == 0 and dropped.op == op
    assert f"'{field}'" in dropped.reason and "must not carry" in dropped.reason
    assert store_bytes(service) == before


@pytest.mark.parametrize("op", ["create", "update", "rescore", "archive", "restore", "delete"])
def test_the_same_op_without_the_forbidden_field_applies(
    seeded: tuple[MemoryService, str, str], op: str
) -> None:
    service, active, archived = seeded
    target = archived if op == "restore" else active
    report = service.apply("project", [_valid(op, target)])
    assert [a.op for a in report.applied] == [op]
    assert report.dropped == []


@pytest.mark.parametrize(
    ("proposal", "needle"),
    [
        ({"op": "create", "scope": "project", "section": "S"}, "requires 'content'"),
        ({"op": "create", "scope": "project", "content": "c"}, "requires 'section'"),
        ({"op": "create", "section": "S", "content": "c"}, "requires 'scope'"),
        ({"op": "update", "scope": "project", "id": "mem_p_000001"}, "content and/or confidence"),
        (
            {"op": "rescore", "scope": "project", "id": "mem_p_000001", "score_reason": "r"},
            "score or tier",
        ),
        ({"op": "rescore", "scope": "project", "id": "mem_p_000001", "score": 5}, "score_reason"),
        ({"op": "archive", "scope": "project", "id": "mem_p_000001"}, "requires 'reason'"),
        ({"op": "restore", "scope": "project", "id": "mem_p_000001"}, "requires 'reason'"),
        ({"op": "delete", "scope": "project", "id": "mem_p_000001"}, "requires 'reason'"),
        ({"op": "create", "scope": "project", "section": "S", "content": "x" * 501}, "content"),
        ({"op": "create", "scope": "project", "section": "S" * 81, "content": "c"}, "section"),
        (
            {"op": "create", "scope": "project", "section": "S", "content": "c", "score": 101},
            "score",
        ),
        ({"op": "create", "scope": "project", "section": "S", "content": "c", "tier": "x"}, "tier"),
        ({"op": "update", "scope": "project", "id": "p1", "content": "c"}, "not a memory id"),
        ({"op": "forget", "scope": "project"}, "unknown op"),
        ({"scope": "project"}, "missing 'op'"),
        ("create", "JSON object"),
    ],
)
def test_schema_errors_drop_the_op_and_keep_the_rest(
    service: MemoryService, proposal: object, needle: str
) -> None:
    report = service.apply("project", [proposal, create()])
    assert [d.index for d in report.dropped] == [0]
    assert needle in report.dropped[0].reason
    assert [a.op for a in report.applied] == ["create"]


def test_allowed_fields_change_what_they_may(service: MemoryService) -> None:
    evidence = [{"tool": "read_file", "path": "pyproject.toml", "sha256": "a" * 64}]
    report = service.apply(
        "project",
        [
            create(
                content="Tests run with pytest -q",
                confidence="high",
                score=75,
                score_reason="said twice",
                evidence=evidence,
            )
        ],
    )
    (entry_id,) = report.created_ids()
    (entry,) = service.list("project")
    assert (entry.confidence, entry.score, entry.tier, entry.score_reason) == (
        "high",
        75,
        "hot",
        "said twice",
    )
    assert entry.source.evidence[0].path == "pyproject.toml"

    service.apply(
        "project",
        [
            {
                "op": "update",
                "scope": "project",
                "id": entry_id,
                "content": "Tests run with  pytest -q -x",
                "confidence": "low",
                "score_reason": "reworded",
            }
        ],
    )
    (entry,) = service.list("project")
    assert (entry.content, entry.confidence, entry.score_reason) == (
        "Tests run with pytest -q -x",
        "low",
        "reworded",
    )
    assert entry.score == 75  # update never touches the score

    service.apply(
        "project",
        [
            {
                "op": "rescore",
                "scope": "project",
                "id": entry_id,
                "tier": "warm",
                "score_reason": "r",
            }
        ],
    )
    (entry,) = service.list("project")
    assert (entry.score, entry.tier) == (50, "warm")  # a tier alone gets a representative score

    service.apply(
        "project",
        [
            {
                "op": "archive",
                "scope": "project",
                "id": entry_id,
                "reason": "r",
                "invalid": "outdated",
            }
        ],
    )
    (entry,) = service.list("project", include_archived=True)
    assert (entry.status, entry.invalid) == ("archived", "outdated")
    assert entry.archived_at is not None


def test_immutable_fields_never_change(service: MemoryService) -> None:
    report = service.apply("project", [create(content="Build with make")], thread_id="thread-1")
    (entry_id,) = report.created_ids()
    (original,) = service.list("project")
    batches: list[list[dict[str, Any]]] = [
        [{"op": "update", "scope": "project", "id": entry_id, "content": "Build with make all"}],
        [{"op": "rescore", "scope": "project", "id": entry_id, "score": 90, "score_reason": "r"}],
        [{"op": "archive", "scope": "project", "id": entry_id, "reason": "r"}],
        [{"op": "restore", "scope": "project", "id": entry_id, "reason": "r"}],
        # Attempts to change immutable fields: each is dropped.
        [{"op": "update", "scope": "project", "id": entry_id, "content": "x", "section": "New"}],
        [{"op": "update", "scope": "project", "id": entry_id, "content": "x", "created_at": "1"}],
        [{"op": "update", "scope": "project", "id": entry_id, "content": "x", "source": {}}],
        [{"op": "update", "scope": "user", "id": entry_id, "content": "moved"}],
    ]
    for batch in batches:
        service.apply("project", batch, thread_id="thread-2")
    (entry,) = service.list("project")
    assert entry.id == original.id and entry.scope == original.scope
    assert entry.section == original.section and entry.created_at == original.created_at
    assert entry.source.thread_id == "thread-1"
    assert entry.content == "Build with make all"


def test_score_and_tier_stay_consistent(service: MemoryService) -> None:
    report = service.apply(
        "project",
        [
            create(score=70),
            create(score=69),
            create(score=29),
            create(tier="hot"),
            create(tier="cold"),
            create(),
            create(score=80, tier="warm"),
        ],
    )
    assert [d.index for d in report.dropped] == [6]
    assert "does not match score" in report.dropped[0].reason
    tiers = [(e.score, e.tier) for e in service.list("project")]
    assert tiers == [
        (70, "hot"),
        (69, "warm"),
        (29, "cold"),
        (85, "hot"),
        (15, "cold"),
        (50, "warm"),
    ]


def test_noop_is_reported_and_changes_nothing(service: MemoryService) -> None:
    service.apply("project", [create()])
    before = store_bytes(service)
    report = service.apply("project", [{"op": "noop", "reason": "nothing durable"}])
    assert [(a.op, a.index) for a in report.applied] == [("noop", 0)]
    assert store_bytes(service) == before
