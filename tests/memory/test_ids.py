"""Entry ids that cannot clash across clones (issue 25): the time-ordered random form of
new entries, the numbered form of older stores (valid forever), and `next_seq` gone."""

from __future__ import annotations

import json
import os
import re
import typing
from pathlib import Path

import pytest

from invincat_server.runtime.memory import MemoryService
from invincat_server.runtime.memory.ids import (
    CROCKFORD,
    ID_BODY,
    id_scope,
    is_entry_id,
    is_numbered,
    new_id,
    sort_key,
)
from invincat_server.runtime.memory.models import Entry, StoreDoc
from invincat_server.runtime.memory.redaction import redact, residual_secrets
from invincat_server.runtime.memory.schema import READABLE_VERSIONS, STORE_VERSION

from .bad_stores import entry, store_text
from .helpers import create, store_bytes

ULID_ID = re.compile(r"mem_[up]_[0-9a-hjkmnp-tv-z]{26}")


def test_new_ids_are_prefixed_lowercase_ulids_in_the_order_they_were_made() -> None:
    made = [new_id("project") for _ in range(2000)]
    assert all(ULID_ID.fullmatch(i) and i.startswith("mem_p_") for i in made)
    assert made == sorted(made) and len(set(made)) == len(made)
    assert new_id("user").startswith("mem_u_")
    assert set("".join(i[6:] for i in made)) <= set(CROCKFORD)


def test_an_id_carries_the_time_it_was_made() -> None:
    import time

    before = time.time_ns() // 1_000_000
    suffix = new_id("project")[6:]
    millis = 0
    for char in suffix[:10]:
        millis = millis * 32 + CROCKFORD.index(char)
    assert before <= millis <= time.time_ns() // 1_000_000 + 1000


def test_a_new_id_avoids_the_ids_it_is_told_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    from invincat_server.runtime.memory import ids

    taken = {new_id("project")}
    spelled = iter([next(iter(taken))[6:], "0" * 26])
    monkeypatch.setattr(ids, "_next_ulid", lambda: next(spelled))
    assert new_id("project", taken) == "mem_p_" + "0" * 26


def test_a_forked_child_does_not_count_on_from_its_parents_last_id() -> None:
    from invincat_server.runtime.memory import ids

    new_id("project")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report what it starts from
        os.write(write, json.dumps(ids._last).encode())
        os._exit(0)
    os.close(write)
    assert json.loads(os.read(read, 1000)) == [0, 0]
    os.close(read)
    os.waitpid(pid, 0)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("mem_p_000001", True),
        ("mem_u_1234567", True),
        ("mem_p_01jd8x3v6e9q2w5r7t0y4k1m8n", True),
        ("mem_p_01JD8X3V6E9Q2W5R7T0Y4K1M8N", False),  # lowercase only
        ("mem_p_01jd8x3v6e9q2w5r7t0y4k1m8", False),  # 25 characters
        ("mem_p_01jd8x3v6e9q2w5r7t0y4k1m8u", False),  # u is not Crockford base32
        ("mem_p_00001", False),
        ("mem_p_000001\n", False),
        ("mem_x_000001", False),
        ("mem_p_٠٠٠٠٠١", False),  # Arabic-Indic digits
        ("mem_p_0000\x0001", False),
        ("", False),
    ],
)
def test_both_id_forms_are_valid_everywhere_alike(value: str, ok: bool) -> None:
    assert is_entry_id(value) is ok
    assert (id_scope(value) is not None) is ok
    fields = {
        "scope": "project" if value.startswith("mem_p") else "user",
        "section": "S",
        "content": "c",
        "score": 50,
        "tier": "warm",
        "created_at": "t",
        "updated_at": "t",
    }
    try:
        Entry.model_validate({"id": value, **fields})
    except ValueError:
        accepted = False
    else:
        accepted = True
    assert accepted is ok
    assert (re.fullmatch(ID_BODY, value) is not None) is ok


def test_numbered_ids_sort_first_by_number_then_new_ids_by_time() -> None:
    newer = [new_id("project") for _ in range(3)]
    ids = ["mem_p_1000000", newer[1], "mem_p_000010", newer[0], "mem_p_000002", newer[2]]
    assert sorted(ids, key=sort_key) == [
        "mem_p_000002",
        "mem_p_000010",
        "mem_p_1000000",
        *newer,
    ]
    assert is_numbered("mem_p_000002") and not is_numbered(newer[0])
    assert sort_key("mem_p_" + "9" * 5000)  # no int() of a huge number


def test_ids_are_never_masked_as_secrets() -> None:
    for _ in range(3000):
        entry_id = new_id("project")
        text = f"see {entry_id} and id={entry_id}"
        assert redact(text).text == text and residual_secrets(text) == [], entry_id


def test_the_store_document_reads_the_versions_the_reader_reads() -> None:
    annotation = StoreDoc.model_fields["version"].annotation
    assert typing.get_args(annotation) == READABLE_VERSIONS
    assert STORE_VERSION == max(READABLE_VERSIONS)


def test_a_version_1_store_loads_and_is_written_as_version_2_without_next_seq(
    service: MemoryService,
) -> None:
    path = service.store_paths()["project"]
    path.parent.mkdir()
    old = [entry(1, content="Run make test before pushing"), entry(7, content="Tabs, not spaces")]
    path.write_text(store_text("project", old, next_seq=8))
    listed = [e.id for e in service.list("project")]
    assert listed == ["mem_p_000001", "mem_p_000007"]
    (created,) = service.apply("project", [create()]).created_ids()
    assert ULID_ID.fullmatch(created)
    doc = json.loads(store_bytes(service))
    assert doc["version"] == 2 and "next_seq" not in doc
    assert [item["id"] for item in doc["items"]] == ["mem_p_000001", "mem_p_000007", created]
    # Numbered ids stay valid for every command: show, archive, revert of their batches.
    shown, _ = service.show("mem_p_000007")
    assert shown is not None and shown.content == "Tabs, not spaces"
    archived = service.archive("mem_p_000001", "moved to CI")
    assert archived.applied[0].id == "mem_p_000001"
    service.revert(archived.batch_id)
    assert service.show("mem_p_000001")[0].status == "active"  # type: ignore[union-attr]
    deleted = service.delete("mem_p_000007", "wrong")
    back = service.revert(deleted.batch_id)
    (recreated,) = back.created_ids()
    assert ULID_ID.fullmatch(recreated) and back.applied[0].model_extra == {
        "restored_from": "mem_p_000007",
        "reverts": deleted.batch_id,
    }


def test_a_hand_edited_next_seq_changes_nothing(service: MemoryService) -> None:
    first = service.apply("project", [create(), create()]).created_ids()
    path = service.store_paths()["project"]
    doc = json.loads(path.read_text())
    doc["next_seq"] = 1  # what version 1 used to number from
    path.write_text(json.dumps(doc))
    fresh = MemoryService(service.home, service.project_root)
    (third,) = fresh.apply("project", [create()]).created_ids()
    assert third not in first and third > max(first)
    assert "next_seq" not in json.loads(path.read_text())
    assert [r.actor for r in fresh.log("project", limit=2)] == ["cli", "external"]


@pytest.mark.parametrize("bad", ["many", 0, -3, 1.5, None])
def test_a_damaged_next_seq_of_an_old_store_is_still_damage(
    service: MemoryService, bad: object
) -> None:
    path = service.store_paths()["project"]
    path.parent.mkdir()
    doc = {"version": 1, "scope": "project", "next_seq": bad, "items": [entry(1)]}
    path.write_text(json.dumps(doc))
    listed = service.list("project")
    assert [e.id for e in listed] == ["mem_p_000001"]
    if bad is None:  # null: as good as absent
        assert "project" not in service.problems()
    else:
        assert "next_seq" in service.problems()["project"]


def test_two_clones_adding_entries_never_pick_the_same_id(tmp_path: Path) -> None:
    made: list[str] = []
    for clone in ("ada", "bob"):
        project = tmp_path / clone
        (project / ".git").mkdir(parents=True)
        service = MemoryService(tmp_path / f"home-{clone}", project)
        made += service.apply("project", [create() for _ in range(20)]).created_ids()
    assert len(set(made)) == 40
