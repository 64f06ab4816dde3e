"""What the model sees (spec section 5): order, filters, caps, whole lines, caching."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from invincat_server.runtime.memory import MemoryService

from .helpers import create, distinct_fact


def _body_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- [")]


def test_hot_before_warm_and_no_cold_archived_or_invalid(service: MemoryService) -> None:
    ids = service.apply(
        "project",
        [
            create(content="warm sixty fact", score=60),
            create(content="hot seventy-five fact", score=75),
            create(content="cold twenty fact", score=20),
            create(content="hot ninety fact", score=90),
            create(content="archived hot fact", score=95),
            create(content="invalid hot fact", score=96),
        ],
    ).created_ids()
    service.archive(ids[4], "old")
    # An archived entry keeps its invalid marker (cleanup only deletes active ones).
    service.archive(ids[5], "wrong", invalid="wrong")
    service.apply("user", [create("user", content="user prefers short answers", score=40)])
    text = service.render_injection()
    assert _body_lines(text) == [
        "- [Testing] user prefers short answers",
        "- [Testing] hot ninety fact",
        "- [Testing] hot seventy-five fact",
        "- [Testing] warm sixty fact",
    ]
    assert text.index("### User") < text.index("### Project")
    assert "cold" not in text and "archived" not in text and "invalid" not in text


def test_ties_break_by_id(service: MemoryService) -> None:
    service.apply(
        "project", [create(content=f"tie {n} {distinct_fact()}", score=80) for n in range(3)]
    )
    lines = _body_lines(service.render_injection())
    assert [line.split()[3] for line in lines] == ["0", "1", "2"]


def test_caps_per_scope_are_8_hot_and_6_warm(service: MemoryService) -> None:
    for scope in ("user", "project"):
        service.apply(
            scope, [create(scope, f"hot{i} {distinct_fact()}", score=90 - i) for i in range(12)]
        )
        service.apply(
            scope, [create(scope, f"warm{i} {distinct_fact()}", score=60 - i) for i in range(10)]
        )
    text = service.render_injection()
    user, project = text.split("### Project")
    for part in (user, project):
        words = [line.split()[2] for line in _body_lines(part)]
        assert words == [f"hot{i}" for i in range(8)] + [f"warm{i}" for i in range(6)]


def test_character_cap_keeps_whole_lines(service: MemoryService) -> None:
    long_facts = [create(content=f"{distinct_fact()} " + "x" * 460, score=90 - i) for i in range(8)]
    service.apply("project", long_facts)
    lines = _body_lines(service.render_injection())
    assert 0 < len(lines) < 8
    assert sum(len(line) + 1 for line in lines) <= 4000
    stored = {f"- [Testing] {e.content}" for e in service.list()}
    assert all(line in stored for line in lines)  # never a cut line


def test_empty_memory_renders_nothing(make_service: Callable[..., MemoryService]) -> None:
    service = make_service()
    assert service.render_injection() == ""
    service.apply("project", [create(score=10)])  # cold only
    assert service.render_injection() == ""


def test_an_unchanged_store_is_not_reread_and_a_changed_one_is(service: MemoryService) -> None:
    service.apply("project", [create(content="first hot fact", score=90)])
    renderer = service.renderer
    first = service.render_injection()
    reads = dict(renderer.reads)
    for _ in range(5):
        assert service.render_injection() == first
    assert dict(renderer.reads) == reads

    service.apply("project", [create(content="second hot fact", score=91)])
    second = service.render_injection()
    assert "second hot fact" in second
    assert renderer.reads["project"] == reads["project"] + 1

    # A hand edit of the same size in the same file is still seen (mtime/inode change).
    path = service.store_paths()["project"]
    doc = json.loads(path.read_text())
    doc["items"][0]["content"] = "FIRST hot fact"
    data = json.dumps(doc, indent=2).encode()
    path.write_bytes(data)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert "FIRST hot fact" in service.render_injection()
