"""The quick reader (reader.py) and the models (models.Entry, the one definition of a valid
entry) agree on which entries are valid, for every bad entry of issue #23 item 4 and for
the valid ones; and the entry-by-entry scan (scan.py) picks exactly the valid ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from invincat_server.runtime.memory import MemoryService, reader, views
from invincat_server.runtime.memory.models import Entry
from invincat_server.runtime.memory.scan import scan_store

from .bad_stores import INVALID, STALE, entry, good_project, nested, store_text, write_stores

VALID: dict[str, Any] = {
    **STALE,
    "plain": good_project()[1],
    "cited": good_project()[0],
    "unknown_fields": dict(good_project()[1], note={"from": "a newer invincat"}),
    # The entry is level 1: an unknown field nested 31 deep reaches level 32, the bound;
    # an evidence object sits at level 4.
    "nested_to_the_limit": entry(3, notes=nested(31)),
    "evidence_nested_to_the_limit": entry(
        3, source={"evidence": [{"tool": "t", "path": "p", "x": nested(28)}]}
    ),
}
JUST_INVALID: dict[str, Any] = {
    "nested_one_past_the_limit": entry(3, notes=nested(32)),
    "evidence_nested_one_past": entry(
        3, source={"evidence": [{"tool": "t", "path": "p", "x": nested(29)}]}
    ),
}


def _model_accepts(raw: Any) -> bool:
    try:
        entry = Entry.model_validate(raw)
    except ValidationError:
        return False
    return entry.scope == "project"


def _reader_accepts(raw: Any) -> bool:
    try:
        reader.entry(json.loads(json.dumps(raw)), "project")
    except reader.NotSimple:
        return False
    return True


@pytest.mark.parametrize("kind", sorted({**INVALID, **JUST_INVALID, **VALID}))
def test_the_reader_and_the_model_agree(kind: str) -> None:
    raw = {**INVALID, **JUST_INVALID, **VALID}[kind]
    assert _model_accepts(raw) is (kind in VALID)
    assert _reader_accepts(raw) is _model_accepts(raw), kind
    if kind in VALID:  # and build the same JSON from it
        built = reader.entry(json.loads(json.dumps(raw)), "project")
        assert built == Entry.model_validate(raw).to_json()


def test_the_scan_keeps_exactly_the_valid_entries() -> None:
    # Ids must differ for the valid ones (a duplicate is a conflict, tested elsewhere).
    valid = [dict(v, id=f"mem_p_{n + 10:06d}") for n, v in enumerate(VALID.values())]
    items = [*INVALID.values(), *valid]
    scan = scan_store(store_text("project", items, next_seq=99).encode(), "project")
    assert [e.id for e in scan.entries] == [v["id"] for v in valid]
    assert [b.index for b in scan.bad] == list(range(len(INVALID)))
    assert scan.problem is None
    for bad in scan.bad:
        assert bad.reason and "\x00" not in bad.reason and len(bad.reason) <= 300


@pytest.mark.parametrize("kind", sorted(INVALID))
def test_a_store_with_a_bad_entry_takes_the_full_path_which_names_it(
    dirs: tuple[Path, Path], kind: str
) -> None:
    """The quick path cannot vouch for it (NotSimple); the service's view lists the valid
    entries and names the bad one, and neither path writes."""
    home, project = dirs
    _, store = write_stores(home, project, INVALID[kind])
    before = store.read_bytes()
    with pytest.raises(reader.NotSimple):
        reader.MemoryReader(home, project).list_view()
    view = views.list_view(MemoryService(home, project))
    assert len(view["items"]) == 3
    assert [b["index"] for b in view["invalid_entries"]] == [1]
    assert store.read_bytes() == before
    assert sorted(p.name for p in store.parent.iterdir()) == ["memory_project.json"]
