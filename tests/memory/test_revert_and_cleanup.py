"""Revert, cleanup, external changes and forward compatibility of the store format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invincat_server.runtime.memory import MemoryService, UnknownBatchError

from .helpers import create, journal_bytes, store_bytes


def _entries(service: MemoryService) -> dict[str, dict[str, object]]:
    return {e.id: e.to_json() for e in service.list(include_archived=True)}


def test_unknown_fields_survive_a_rewrite(service: MemoryService) -> None:
    (entry_id,) = service.apply("project", [create(content="Keep me around")]).created_ids()
    path = service.store_paths()["project"]
    doc = json.loads(path.read_text())
    doc["x_future_top"] = {"kept": [1, 2]}
    doc["items"][0]["x_note"] = "from a newer invincat"
    doc["items"][0]["source"]["x_origin"] = "import"
    path.write_text(json.dumps(doc))
    service.apply(
        "project", [{"op": "update", "scope": "project", "id": entry_id, "content": "Keep me"}]
    )
    service.apply("project", [create()])
    doc = json.loads(path.read_text())
    assert doc["x_future_top"] == {"kept": [1, 2]}
    assert doc["items"][0]["x_note"] == "from a newer invincat"
    assert doc["items"][0]["source"]["x_origin"] == "import"
    assert doc["items"][0]["content"] == "Keep me"


def test_revert_restores_pre_batch_content_as_a_new_journaled_batch(
    service: MemoryService,
) -> None:
    a, b, c = service.apply("project", [create(), create(), create(score=40)]).created_ids()
    service.archive(c, "old")
    snapshot = _entries(service)
    batch = service.apply(
        "project",
        [
            {"op": "update", "scope": "project", "id": a, "content": "rewritten fact text"},
            {"op": "delete", "scope": "project", "id": b, "reason": "wrong"},
            {"op": "restore", "scope": "project", "id": c, "reason": "needed"},
            create(content="brand new entry from this batch"),
        ],
    )
    (new_id,) = batch.created_ids()
    report = service.revert(batch.batch_id)
    assert report.reverts == batch.batch_id and report.actor == "user"
    by_op = {(x.op, x.id): x for x in report.applied}
    assert ("delete", new_id) in by_op and ("revert", a) in by_op and ("revert", c) in by_op
    (recreated,) = [x for x in report.applied if x.op == "create"]
    assert (recreated.model_extra or {})["restored_from"] == b and recreated.id not in (a, b, c)

    after = _entries(service)
    ignore = {"updated_at", "created_at", "archived_at", "reverted_from", "id"}
    for entry_id in (a, c):
        assert {k: v for k, v in after[entry_id].items() if k not in ignore} == {
            k: v for k, v in snapshot[entry_id].items() if k not in ignore
        }
    assert after[c]["status"] == "archived"
    assert {k: v for k, v in after[recreated.id].items() if k not in ignore} == {
        k: v for k, v in snapshot[b].items() if k not in ignore
    }
    assert new_id not in after and b not in after
    journal = [json.loads(x) for x in journal_bytes(service).splitlines()]
    assert journal[-1]["batch_id"] == report.batch_id and journal[-1]["reverts"] == batch.batch_id


def test_revert_skips_entries_changed_by_a_later_batch(service: MemoryService) -> None:
    (entry_id,) = service.apply("project", [create()]).created_ids()
    first = service.apply(
        "project", [{"op": "update", "scope": "project", "id": entry_id, "content": "second text"}]
    )
    service.apply(
        "project", [{"op": "update", "scope": "project", "id": entry_id, "content": "third text"}]
    )
    report = service.revert(first.batch_id)
    assert report.applied == [] and "later" in report.dropped[0].reason
    assert service.list()[0].content == "third text"


def test_revert_of_a_create_and_a_revert_of_the_revert(service: MemoryService) -> None:
    batch = service.apply("project", [create(content="temporary fact to undo")])
    undo = service.revert(batch.batch_id)
    assert service.list() == []
    redo = service.revert(undo.batch_id)
    assert [e.content for e in service.list()] == ["temporary fact to undo"]
    assert redo.created_ids() != batch.created_ids()  # a new id: ids are never reused


def test_unknown_batch_is_an_error(service: MemoryService) -> None:
    with pytest.raises(UnknownBatchError):
        service.revert("b_nope")


def test_invalid_entries_are_deleted_by_a_cleanup_batch(service: MemoryService) -> None:
    keep, drop = service.apply("project", [create(), create()]).created_ids()
    report = service.apply(
        "project",
        [
            {
                "op": "rescore",
                "scope": "project",
                "id": drop,
                "score": 10,
                "score_reason": "contradicted by pyproject.toml",
                "invalid": "wrong",
            }
        ],
    )
    assert report.cleanup_batch_id is not None
    assert [e.id for e in service.list()] == [keep]
    cleanup = service.log("project", limit=1)[0]
    assert cleanup.actor == "cleanup" and cleanup.follows == report.batch_id
    assert [(a.op, a.id) for a in cleanup.applied] == [("delete", drop)]
    # Reverting the rescore also undoes the deletion its cleanup made.
    revert = service.revert(report.batch_id)
    (entry,) = [e for e in service.list() if e.id != keep]
    assert entry.invalid is None and entry.score != 10
    assert (revert.applied[0].model_extra or {})["restored_from"] == drop


def test_public_cleanup_removes_markers_left_by_a_hand_edit(service: MemoryService) -> None:
    keep, drop = service.apply("project", [create(), create()]).created_ids()
    path = service.store_paths()["project"]
    doc = json.loads(path.read_text())
    doc["items"][1]["invalid"] = "outdated"
    path.write_text(json.dumps(doc))
    reports = service.cleanup()
    assert [(a.op, a.id) for r in reports for a in r.applied] == [("delete", drop)]
    assert [e.id for e in service.list()] == [keep]
    assert service.cleanup() == []


def test_external_edit_is_journaled_and_revertible(service: MemoryService) -> None:
    (entry_id,) = service.apply("project", [create(content="Original wording")]).created_ids()
    path = service.store_paths()["project"]
    doc = json.loads(path.read_text())
    doc["items"][0]["content"] = "Edited by hand"
    path.write_text(json.dumps(doc, indent=4))
    hand_edited = path.read_bytes()
    # The housekeeping after every turn (cleanup) loads each store under its lock, which
    # journals a change made while no tool ran.
    assert service.cleanup() == []
    report = service.log("project", limit=1)[0]
    assert report.actor == "external"
    assert [(a.op, a.id) for a in report.applied] == [("update", entry_id)]
    assert store_bytes(service) == hand_edited  # accepted as is, not rewritten
    service.cleanup()
    assert service.log("project", limit=1)[0].batch_id == report.batch_id  # journaled once
    service.revert(report.batch_id)
    assert service.list()[0].content == "Original wording"


def test_store_paths_follow_the_spec(tmp_path: Path) -> None:
    service = MemoryService(tmp_path / "home", tmp_path / "proj")
    assert service.store_paths() == {
        "user": tmp_path / "home" / "memory_user.json",
        "project": tmp_path / "proj" / ".invincat" / "memory_project.json",
    }
    assert service.list() == [] and service.render_injection() == ""
    assert not (tmp_path / "proj" / ".invincat").exists()  # reading creates nothing
