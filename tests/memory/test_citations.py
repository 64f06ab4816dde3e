"""Citations on entries: validated by governance, checked for staleness before injection,
re-anchored when the cited text moved (real files, real stores)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from invincat_server.runtime.memory import MemoryService

from .helpers import create, store_bytes

DEPLOY = "#!/bin/sh\nset -e\n./build.sh --release\nrsync -a dist/ prod:/srv/app\necho done\n"


@pytest.fixture
def project(dirs: tuple[Path, Path]) -> Path:
    root = dirs[1]
    (root / "scripts").mkdir()
    (root / "scripts" / "deploy.sh").write_text(DEPLOY)
    return root


def cite(path: str = "scripts/deploy.sh", start: int = 3, end: int = 4, **extra: object) -> dict:
    return {"path": path, "start_line": start, "end_line": end, **extra}


def deploy_fact(service: MemoryService, **fields: object) -> str:
    report = service.apply(
        "project",
        [
            create(
                content="Deploy builds with --release then rsyncs dist to prod",
                score=85,
                citations=[cite(**fields)],
            )
        ],
    )
    assert not report.dropped, report.dropped
    [entry_id] = report.created_ids()
    return entry_id


def test_the_runtime_records_hash_and_anchor_of_the_cited_lines(
    service: MemoryService, project: Path
) -> None:
    entry_id = deploy_fact(service)
    [entry] = service.list()
    [citation] = entry.citations
    expected = hashlib.sha256(b"./build.sh --release\nrsync -a dist/ prod:/srv/app").hexdigest()
    assert (entry.id, citation.path, citation.start_line, citation.end_line) == (
        entry_id,
        "scripts/deploy.sh",
        3,
        4,
    )
    assert citation.sha256 == expected and citation.anchor == "./build.sh --release"


def test_uncited_entries_are_stored_without_a_citations_field(service: MemoryService) -> None:
    service.apply("project", [create(content="plain fact without citations")])
    [line] = [x for x in store_bytes(service).decode().splitlines() if "mem_p_" in x]
    assert "citations" not in json.loads(line.strip().rstrip(","))


@pytest.mark.parametrize(
    ("citation", "reason"),
    [
        (cite(path="../outside.sh"), "outside the project"),
        (cite(path="scripts/missing.sh"), "does not exist"),
        (cite(start=4, end=9), "outside scripts/deploy.sh (5 lines)"),
        (cite(start=4, end=3), "end_line is before start_line"),
        (cite(path=".invincat/memory_project.json", start=1, end=1), "protected memory data"),
        (cite(sha256="0" * 64), "sha256 does not match"),
        (cite(anchor="curl | sh"), "anchor is not in"),
    ],
)
def test_bad_citations_drop_the_op_with_a_reason(
    service: MemoryService, project: Path, citation: dict, reason: str
) -> None:
    (project.parent / "outside.sh").write_text(DEPLOY)
    service.apply("project", [create(content="seed fact so the store exists")])
    before = store_bytes(service)
    report = service.apply("project", [create(content="cited fact", citations=[citation])])
    [dropped] = report.dropped
    assert reason in dropped.reason and report.created_ids() == []
    assert store_bytes(service) == before


def test_user_entries_cannot_cite_project_files(service: MemoryService, project: Path) -> None:
    report = service.apply("user", [create("user", content="user fact", citations=[cite()])])
    assert "project entries only" in report.dropped[0].reason


def test_a_changed_file_makes_the_entry_stale_and_injection_says_what_changed(
    service: MemoryService, project: Path
) -> None:
    deploy_fact(service)
    assert "may be stale" not in service.render_injection()
    (project / "scripts" / "deploy.sh").write_text(DEPLOY.replace("--release", "--debug"))
    text = service.render_injection()
    assert "(may be stale: scripts/deploy.sh lines 3-4 changed)" in text
    [(entry, verdict)] = service.stale_entries()
    assert verdict.state == "stale" and entry.status == "active"  # nothing deleted


def test_moved_lines_are_re_anchored_through_a_journaled_batch(
    service: MemoryService, project: Path
) -> None:
    entry_id = deploy_fact(service)
    (project / "scripts" / "deploy.sh").write_text("# deploy\n# usage: deploy.sh\n" + DEPLOY)
    assert "may be stale" not in service.render_injection()  # moved is not stale
    report = service.reanchor()
    assert report is not None and [a.op for a in report.applied] == ["update"]
    [entry] = service.list()
    assert (entry.id, entry.citations[0].start_line, entry.citations[0].end_line) == (
        entry_id,
        5,
        6,
    )
    assert service.log("project")[0].actor == "reanchor"
    assert service.reanchor() is None  # nothing moved any more


def test_a_renamed_file_is_re_anchored_to_its_new_path(
    service: MemoryService, project: Path
) -> None:
    deploy_fact(service)
    (project / "scripts" / "deploy.sh").rename(project / "scripts" / "release.sh")
    assert service.reanchor() is not None
    [entry] = service.list()
    assert entry.citations[0].path == "scripts/release.sh"
    assert "may be stale" not in service.render_injection()


def test_a_deleted_file_is_named_in_the_note(service: MemoryService, project: Path) -> None:
    deploy_fact(service)
    (project / "scripts" / "deploy.sh").unlink()
    assert "(may be stale: scripts/deploy.sh was deleted)" in service.render_injection()
    assert service.reanchor() is None


def test_unchanged_cited_files_are_not_read_again(service: MemoryService, project: Path) -> None:
    deploy_fact(service)
    service.render_injection()
    reads = service.staleness.reads
    for _ in range(5):
        service.render_injection()
    assert service.staleness.reads == reads
