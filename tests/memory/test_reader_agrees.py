"""The quick reader (runtime/memory/reader.py) and the pydantic models agree over many
generated stores and journals: whatever the reader vouches for, the models accept and
serialise to the same JSON, byte for byte. The reader may refuse more (`NotSimple`: the
caller takes the full path), never less; and it must accept untouched valid documents, or
the quick path would be quick for nothing.

The generator is deterministic (a seeded `random.Random`; hypothesis is not a
dependency): each case starts from a valid document and applies a few mutations drawn
from values at and beyond the models' limits (wrong types, nulls, NUL bytes, huge and
negative numbers, missing fields, extra keys, deep nesting)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from invincat_server.runtime.memory import reader
from invincat_server.runtime.memory.models import (
    MAX_CONTENT,
    MAX_ENTRY_DEPTH,
    MAX_SCORE_REASON,
    MAX_SECTION,
    StoreDoc,
)
from invincat_server.runtime.memory.paths import StoreFiles
from invincat_server.runtime.memory.report import JournalRecord

CASES = 1500
SEED = 27


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"n": value}
    return value


ODD_VALUES: list[Any] = [
    None,
    "",
    "x",
    "\x00",
    "a\x00b",
    "é",
    "x" * 65,
    "x" * 129,
    "x" * 501,
    "x" * 1001,
    "x" * (MAX_SECTION + 1),
    "x" * (MAX_CONTENT + 1),
    "x" * (MAX_SCORE_REASON + 1),
    0,
    1,
    2,
    3,
    -1,
    29,
    30,
    69,
    70,
    100,
    101,
    2**63,
    -(2**63),
    10**30,
    1.0,
    50.0,
    0.5,
    True,
    False,
    "50",
    "hot",
    "warm",
    "cold",
    "active",
    "archived",
    "deleted",
    "low",
    "high",
    "wrong",
    "user",
    "project",
    "mem_u_000001",
    "mem_p_000001",
    "mem_u_1",
    "mem_u_00000١",
    "mem_p_01kbx3v6e9q2w5r7t0y4k1m8nz",
    "mem_u_01kbx3v6e9q2w5r7t0y4k1m8nz",
    "mem_p_01KBX3V6E9Q2W5R7T0Y4K1M8NZ",
    "mem_p_01kbx3v6e9q2w5r7t0y4k1m8nu",
    "mem_p_01kbx3v6e9q2w5r7t0y4k1m8n",
    "mem_p_01kbx3v6e9q2w5r7t0y4k1m8nz\n",
    [],
    [1],
    [{}],
    {},
    {"k": 1},
    _deep(MAX_ENTRY_DEPTH - 2),
    _deep(MAX_ENTRY_DEPTH + 2),
]


def _citation(rng: random.Random) -> dict[str, Any]:
    start = rng.randint(1, 40)
    return {
        "path": rng.choice(["a.py", "src/b.md", "dir/c.txt"]),
        "start_line": start,
        "end_line": start + rng.randint(0, 5),
        "sha256": "0" * 64,
        "anchor": "def f():",
    }


def _entry(rng: random.Random, scope: str, seq: int) -> dict[str, Any]:
    score = rng.randint(0, 100)
    letter = "u" if scope == "user" else "p"
    # Both id forms: numbered (stores of version 1) and a ULID (new entries, ids.py).
    suffix = f"{seq:06d}" if rng.random() < 0.5 else "01kbx3v6e9q2w5r7t0y4k1m8n" + "abc"[seq % 3]
    item: dict[str, Any] = {
        "id": f"mem_{letter}_{suffix}",
        "scope": scope,
        "section": rng.choice(["Prefs", "Build", "Style"]),
        "content": rng.choice(["uses pytest", "tabs, not spaces", "é and ü"]),
        "score": score,
        "tier": "hot" if score >= 70 else "warm" if score >= 30 else "cold",
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-02T00:00:00+00:00",
    }
    if rng.random() < 0.5:
        item["status"] = rng.choice(["active", "archived"])
        item["confidence"] = rng.choice(["low", "medium", "high"])
    if rng.random() < 0.3:
        item["source"] = {
            "thread_id": "t_1",
            "actor": "memory_agent",
            "evidence": [{"tool": "read_file", "path": "a.py", "sha256": None}],
        }
        if rng.random() < 0.6:  # attribution (issue 25), also partial or null
            item["source"]["author"] = rng.choice(
                [{"name": "Ada", "email": "ada@example.com"}, {"name": "Bob"}, None]
            )
            item["source"]["branch"] = rng.choice(["main", "feature/x", None])
    if rng.random() < 0.3:
        item["citations"] = [_citation(rng) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.2:
        item["x_extra"] = {"kept": [1, 2]}
    return item


def _places(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every (container path, key) in `doc`: where a mutation may land."""
    found: list[tuple[Any, ...]] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            found.append((*path, key))
            found += _places(value, (*path, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found.append((*path, index))
            found += _places(value, (*path, index))
    return found


def _mutate(rng: random.Random, doc: Any) -> None:
    place = rng.choice(_places(doc))
    parent = doc
    for key in place[:-1]:
        parent = parent[key]
    last = place[-1]
    roll = rng.random()
    if roll < 0.15 and isinstance(parent, dict):
        del parent[last]  # a missing field
    elif roll < 0.25 and isinstance(parent, dict):
        parent[rng.choice(["extra", "_private", "x\x00"])] = rng.choice(ODD_VALUES)
    elif roll < 0.3 and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))  # a duplicate item
    else:
        parent[last] = copy.deepcopy(rng.choice(ODD_VALUES))


def _full_store(data: bytes, scope: str) -> list[dict[str, Any]] | None:
    """What the service reads (store.py: `StoreDoc.model_validate_json`), None if refused."""
    try:
        doc = StoreDoc.model_validate_json(data)
    except ValidationError:
        return None
    if doc.scope != scope:
        return None  # the service refuses another scope's store
    return [entry.to_json() for entry in doc.items]


def _quick_store(path: Path, scope: str) -> list[dict[str, Any]] | None:
    try:
        return reader.read_store(StoreFiles(scope, path))  # type: ignore[arg-type]
    except reader.NotSimple:
        return None


def _store_cases() -> list[tuple[str, bytes]]:
    rng = random.Random(SEED)
    cases = []
    for number in range(CASES):
        scope = rng.choice(["user", "project"])
        items = [_entry(rng, scope, seq) for seq in range(1, rng.randint(1, 4))]
        # Version 1 with its `next_seq`, version 2 without (what this version writes).
        doc: dict[str, Any] = (
            {"version": 1, "scope": scope, "next_seq": 9, "items": items}
            if rng.random() < 0.5
            else {"version": 2, "scope": scope, "items": items}
        )
        for _ in range(0 if number % 5 == 0 else rng.randint(1, 3)):
            _mutate(rng, doc)
        cases.append((scope, json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode()))
    return cases


def test_whatever_the_reader_vouches_for_the_models_accept_alike(tmp_path: Path) -> None:
    vouched = refused_by_both = stricter = 0
    for number, (scope, data) in enumerate(_store_cases()):
        path = tmp_path / f"store_{number}.json"
        path.write_bytes(data)
        quick, full = _quick_store(path, scope), _full_store(data, scope)
        if quick is None:
            if full is None:
                refused_by_both += 1
            else:
                stricter += 1
            continue
        vouched += 1
        assert full is not None, f"the reader vouches for a store the models refuse: {data!r}"
        assert json.dumps(quick, ensure_ascii=False) == json.dumps(full, ensure_ascii=False), data
    # Every kind of case occurred: the generator exercises all three outcomes.
    assert vouched > CASES // 10 and refused_by_both > CASES // 10 and stricter > 0, (
        vouched,
        refused_by_both,
        stricter,
    )


def test_untouched_valid_stores_take_the_quick_path(tmp_path: Path) -> None:
    for number, (scope, data) in enumerate(_store_cases()):
        if number % 5:
            continue  # mutated
        path = tmp_path / "store.json"
        path.write_bytes(data)
        assert _quick_store(path, scope) is not None, data


def _record(rng: random.Random, scope: str) -> dict[str, Any]:
    entry = _entry(rng, scope, 1)
    return {
        "batch_id": "b_1",
        "time": "2026-01-01T00:00:00+00:00",
        "scope": scope,
        "actor": rng.choice(["memory_agent", "user"]),
        "thread_id": rng.choice([None, "t_1"]),
        "rejected": False,
        "proposed": [{"op": "add", "content": "x"}],
        "applied": [{"op": "add", "id": entry["id"], "index": 0}],
        "dropped": [{"index": 1, "op": "update", "reason": "unknown id", "id": None}],
        "before": {entry["id"]: None},
        "after": {entry["id"]: entry},
        "hash_before": None,
        "hash_after": "abc",
    }


@pytest.mark.parametrize("seed", range(4))
def test_journal_records_the_reader_vouches_for_are_the_models(tmp_path: Path, seed: int) -> None:
    rng = random.Random(SEED * 100 + seed)
    vouched = 0
    for number in range(CASES // 4):
        scope = rng.choice(["user", "project"])
        record = _record(rng, scope)
        for _ in range(0 if number % 5 == 0 else rng.randint(1, 3)):
            _mutate(rng, record)
        line = json.dumps(record).encode()
        path = tmp_path / f"journal_{number}.jsonl"
        path.write_bytes(line + b"\n")
        try:
            [quick] = reader.read_journal(path, tmp_path)
        except reader.NotSimple:
            continue
        vouched += 1
        try:
            full = JournalRecord.model_validate_json(line).model_dump(mode="json")
        except ValidationError as exc:
            raise AssertionError(
                f"the reader vouches for a record the models refuse: {line!r}"
            ) from exc
        assert json.dumps(quick, ensure_ascii=False) == json.dumps(full, ensure_ascii=False)
    assert vouched > CASES // 40
