"""One bad entry costs that entry only (issue #23 item 4), through the real console
script: `invincat memory list|verify` (and `--json`) name the bad entry, list and verify
the valid ones, exit as documented, and leave the store byte for byte as it was (no
`corrupt-` backup, no fresh store, no journal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.deadlines import DEADLINE

from .bad_stores import GOOD_PROJECT, GOOD_USER, INVALID, STALE, leftovers, write_stores

INVINCAT = Path(sys.executable).with_name("invincat")


def run(dirs: tuple[Path, Path], *args: str) -> tuple[int, str, str]:
    home, project = dirs
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVINCAT_")}
    env["INVINCAT_HOME"] = str(home)
    env["COLUMNS"] = "200"
    done = subprocess.run(
        [str(INVINCAT), "memory", *args, "--cwd", str(project)],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def _check_untouched(stores: tuple[Path, Path], before: tuple[bytes, bytes]) -> None:
    assert (stores[0].read_bytes(), stores[1].read_bytes()) == before
    assert leftovers(stores[1]) == []  # no backup, journal, lock or temp file
    assert [p.name for p in stores[0].parent.glob("memory_user*")] == ["memory_user.json"]


@pytest.mark.parametrize("kind", sorted(INVALID))
def test_list_and_verify_skip_and_name_the_bad_entry_and_write_nothing(
    dirs: tuple[Path, Path], kind: str
) -> None:
    stores = write_stores(*dirs, INVALID[kind])
    before = (stores[0].read_bytes(), stores[1].read_bytes())

    code, out, _ = run(dirs, "list")
    assert code == 0
    for content in (GOOD_USER, *GOOD_PROJECT):
        assert content in out, out
    [line] = [line for line in out.splitlines() if line.startswith("INVALID")]
    assert line.startswith("INVALID project items[1]") and "skipped:" in line, line

    code, out, _ = run(dirs, "list", "--json")
    view = json.loads(out)
    assert code == 0
    assert [e["content"] for e in view["items"]] == [GOOD_USER, *GOOD_PROJECT]
    [bad] = view["invalid_entries"]
    assert (bad["scope"], bad["index"]) == ("project", 1) and bad["reason"], bad
    assert bad["id"] in (None, "mem_p_000003", "mem_u_000003")

    code, out, _ = run(dirs, "verify")
    assert code == 1, out  # documented: an invalid entry needs a person's look
    assert "INVALID project items[1]" in out and "1 invalid entry skipped" in out
    assert "mem_p_000001  fresh" in out  # the valid cited entry is still verified

    code, out, _ = run(dirs, "verify", "--json")
    report = json.loads(out)
    assert code == 1 and report["invalid"] == 1 and report["stale"] == 0
    assert [e["id"] for e in report["entries"]] == ["mem_p_000001"]
    assert report["invalid_entries"] == [bad]

    _check_untouched(stores, before)


@pytest.mark.parametrize("kind", sorted(STALE))
def test_a_citation_outside_the_project_is_stale_not_opened(
    dirs: tuple[Path, Path], kind: str
) -> None:
    """Documented: a stored citation the path check refuses makes its entry stale."""
    stores = write_stores(*dirs, STALE[kind])
    before = (stores[0].read_bytes(), stores[1].read_bytes())
    code, out, _ = run(dirs, "verify", "--json")
    report = json.loads(out)
    assert code == 1 and report["stale"] == 1 and report["invalid"] == 0
    [stale] = [e for e in report["entries"] if e["stale"]]
    assert stale["id"] == "mem_p_000003" and "outside the project" in stale["note"]
    code, out, _ = run(dirs, "list")
    assert code == 0 and "active!" in out and "INVALID" not in out
    _check_untouched(stores, before)


def _whole(doc: dict[str, Any]) -> str:
    return json.dumps(doc)


@pytest.mark.parametrize(
    "damage",
    [
        "items_not_a_list",
        "nested_past_the_parser",
        "not_json",
    ],
)
def test_a_store_that_cannot_be_read_entry_by_entry_is_reported_and_left_alone(
    dirs: tuple[Path, Path], damage: str
) -> None:
    """Whole-file damage: the read says so and uses none of that store's entries; the
    other scope is listed; nothing is written (the next *write* backs it up, as
    documented)."""
    stores = write_stores(*dirs, "placeholder")
    text = {
        "items_not_a_list": _whole(
            {"version": 1, "scope": "project", "next_seq": 2, "items": {"a": 1}}
        ),
        "nested_past_the_parser": '{"version": 1, "scope": "project", "next_seq": 2, '
        '"items": [' + "[" * 100_000 + "]" * 100_000 + "]}",
        "not_json": "{ this is not json",
    }[damage]
    stores[1].write_text(text)
    before = (stores[0].read_bytes(), stores[1].read_bytes())

    code, out, err = run(dirs, "list")
    assert code == 0 and GOOD_USER in out
    assert "warning (project)" in err and "left it untouched" in err, err
    code, out, err = run(dirs, "list", "--json")
    assert code == 0 and [e["content"] for e in json.loads(out)["items"]] == [GOOD_USER]
    code, out, err = run(dirs, "verify", "--json")
    assert code == 2 and "left it untouched" in err  # documented: unreadable store
    _check_untouched(stores, before)


def test_duplicate_ids_stay_a_conflict_for_a_person_to_resolve(dirs: tuple[Path, Path]) -> None:
    """Documented (docs/memory.md, conflicts): one id twice is what keeping both sides
    of a git clash gives; the command names it and exits 2, and nothing is written."""
    stores = write_stores(*dirs, INVALID["cite_number"])
    doc = json.loads(stores[1].read_text())
    doc["items"][1] = dict(doc["items"][0], content="the other side's version")
    stores[1].write_text(json.dumps(doc))
    before = (stores[0].read_bytes(), stores[1].read_bytes())
    for args in (["list"], ["list", "--json"], ["verify"], ["verify", "--json"]):
        code, _, err = run(dirs, *args)
        assert code == 2 and "mem_p_000001" in err, (args, err)
    _check_untouched(stores, before)


def test_a_write_refuses_while_an_entry_is_invalid_and_the_store_is_kept(
    dirs: tuple[Path, Path],
) -> None:
    """A rewrite would have to drop someone's entry: refused with the way out, exit 2."""
    stores = write_stores(*dirs, INVALID["cite_nul_byte"])
    before = (stores[0].read_bytes(), stores[1].read_bytes())
    code, _, err = run(dirs, "archive", "mem_p_000002", "--reason", "done")
    assert code == 2 and "items[1] (mem_p_000003)" in err and "by hand" in err, err
    assert stores[1].read_bytes() == before[1]
    assert not list(stores[1].parent.glob("*.corrupt-*"))
    # The user scope is unaffected.
    code, _, err = run(dirs, "archive", "mem_u_000001", "--reason", "done")
    assert code == 0, err


def test_show_of_an_invalid_entry_says_why_instead_of_unknown(dirs: tuple[Path, Path]) -> None:
    stores = write_stores(*dirs, INVALID["cite_nul_byte"])
    before = (stores[0].read_bytes(), stores[1].read_bytes())
    code, out, _ = run(dirs, "show", "mem_p_000003")
    assert code == 0 and "mem_p_000003: invalid, skipped: citations.0.path" in out, out
    code, out, _ = run(dirs, "show", "mem_p_000003", "--json")
    view = json.loads(out)
    assert code == 0 and view["entry"] is None and view["invalid_entry"]["index"] == 1
    code, out, _ = run(dirs, "show", "mem_p_000002")
    assert code == 0 and GOOD_PROJECT[1] in out
    _check_untouched(stores, before)
