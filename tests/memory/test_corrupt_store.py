"""Corrupt stores: reads never write; a write backs the exact bytes up first and starts a
fresh store only after it (spec section 9). A store whose document is sound but with an
entry that does not validate is not reset at all: see test_bad_entries.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invincat_server.runtime.memory import MemoryService, StoreUnavailableError
from invincat_server.runtime.memory import paths as paths_mod
from invincat_server.runtime.memory import store as store_mod
from invincat_server.runtime.memory.errors import InvalidEntriesError
from invincat_server.runtime.memory.store import parse_store

from .helpers import create

CORRUPTIONS = {
    "bad_json": b'{"version": 1, "scope": "project", "next_seq": 8, "items": [{"id": "mem_p_0000'
    b'07"',
    "bad_utf8": b'{"version": 1, "scope": "project", "next_seq": 3, "items": []}\xff\xfe\x00',
    "wrong_schema": json.dumps(
        {"version": 1, "scope": "project", "next_seq": "many", "items": [{"id": "mem_p_000005"}]}
    ).encode(),
    "not_an_object": b"[1, 2, 3]",
    "too_deep": b'{"version": 1, "scope": "project", "next_seq": 2, "items": [' + b"[" * 5000,
    "huge_number": b'{"version": 1, "scope": "project", "next_seq": %s, "items": []}'
    % (b"9" * 5000),
}
INCONSISTENT_TIER = json.dumps(
    {
        "version": 1,
        "scope": "project",
        "next_seq": 2,
        "items": [
            {
                "id": "mem_p_000001",
                "scope": "project",
                "section": "S",
                "content": "c",
                "score": 90,
                "tier": "cold",
                "created_at": "t",
                "updated_at": "t",
            }
        ],
    }
).encode()


def _backups(service: MemoryService) -> list[Path]:
    return sorted(service.files["project"].directory.glob("memory_project.corrupt-*.json"))


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_corrupt_store_is_backed_up_byte_for_byte_then_replaced(
    service: MemoryService, kind: str
) -> None:
    original = CORRUPTIONS[kind]
    path = service.store_paths()["project"]
    path.parent.mkdir(parents=True)
    path.write_bytes(original)
    assert service.list() == []
    # A read reports the damage and leaves it alone: no backup, no fresh store.
    assert "left it untouched" in service.problems()["project"]
    assert path.read_bytes() == original and _backups(service) == []
    # The next write backs the exact bytes up, then starts a fresh store.
    (created,) = service.apply("project", [create()]).created_ids()
    (backup,) = _backups(service)
    assert backup.read_bytes() == original
    fresh = parse_store(path.read_bytes(), "project")
    assert list(fresh.entries) == [created]
    # Ids seen in the broken bytes are never handed out again: new ids are random.
    assert created.encode() not in original
    recovery = [r for r in service.log("project") if r.actor == "recovery"]
    assert len(recovery) == 1 and backup.name in (recovery[0].reason or "")


def test_when_the_backup_fails_the_store_is_untouched_and_writes_refused(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = CORRUPTIONS["wrong_schema"]
    path = service.store_paths()["project"]
    path.parent.mkdir(parents=True)
    path.write_bytes(original)

    def no_space(target: Path, data: bytes, **_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_mod, "write_backup", no_space)
    with pytest.raises(StoreUnavailableError) as info:
        service.apply("project", [create()])
    message = str(info.value)
    assert "No space left on device" in message and "left untouched" in message
    assert str(path) in message and "mv " in message
    assert path.read_bytes() == original
    assert service.list("project") == []  # listing still works (nothing valid to show)
    assert "untouched" in service.problems()["project"]
    service.apply("user", [create("user")])  # the other scope is unaffected


def test_backup_blocked_by_a_directory_in_its_place(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = CORRUPTIONS["bad_json"]
    path = service.store_paths()["project"]
    path.parent.mkdir(parents=True)
    path.write_bytes(original)
    monkeypatch.setattr(paths_mod, "utc_stamp", lambda: "20250101T000000.000000Z")
    (path.parent / "memory_project.corrupt-20250101T000000.000000Z.json").mkdir()
    with pytest.raises(StoreUnavailableError):
        service.apply("project", [create()])
    assert path.read_bytes() == original


def test_salvageable_entries_are_listed_while_read_only(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.apply("project", [create(content="still readable fact")])
    path = service.store_paths()["project"]
    doc = json.loads(path.read_text())
    doc["next_seq"] = "broken"
    path.write_text(json.dumps(doc))

    def refuse(target: Path, data: bytes, **_: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(store_mod, "write_backup", refuse)
    damaged = path.read_bytes()
    assert [e.content for e in service.list()] == ["still readable fact"]
    assert "next_seq" in service.problems()["project"]
    assert path.read_bytes() == damaged and _backups(service) == []
    with pytest.raises(StoreUnavailableError, match="Permission denied"):
        service.apply("project", [create()])
    assert "Permission denied" in service.problems()["project"]
    assert [e.content for e in service.list()] == ["still readable fact"]


def test_an_entry_that_contradicts_its_tier_costs_that_entry_only(
    service: MemoryService,
) -> None:
    """Entry-level damage is not a reset: writes refuse until a person fixes it."""
    path = service.store_paths()["project"]
    path.parent.mkdir(parents=True)
    path.write_bytes(INCONSISTENT_TIER)
    assert service.list() == []
    [bad] = service.invalid_entries()
    assert bad.id == "mem_p_000001" and "tier 'cold' does not match score 90" in bad.reason
    with pytest.raises(InvalidEntriesError, match="mem_p_000001"):
        service.apply("project", [create()])
    assert path.read_bytes() == INCONSISTENT_TIER and _backups(service) == []
    told: list[str] = []
    service.set_notify(told.append)
    assert service.cleanup() == []  # housekeeping waits for the person too
    assert service.cleanup() == []
    assert path.read_bytes() == INCONSISTENT_TIER
    # Said once, with the way out, and that the valid entries are still used.
    [message] = told
    assert "mem_p_000001" in message and "by hand" in message
    assert "nothing new is saved to project memory" in message


def test_a_newer_format_is_never_reset(service: MemoryService) -> None:
    path = service.store_paths()["project"]
    path.parent.mkdir(parents=True)
    newer = json.dumps({"version": 3, "scope": "project", "items": []}).encode()
    path.write_bytes(newer)
    with pytest.raises(StoreUnavailableError, match="newer"):
        service.apply("project", [create()])
    assert path.read_bytes() == newer and _backups(service) == []


def test_a_torn_journal_line_is_skipped_and_not_glued_to(service: MemoryService) -> None:
    service.apply("project", [create()])
    journal = service.files["project"].journal
    with journal.open("ab") as fh:
        fh.write(b'{"batch_id": "b_torn", "ti')
    report = service.apply("project", [create()])
    records = service.log("project")
    assert len(records) == 2 and records[0].batch_id == report.batch_id
