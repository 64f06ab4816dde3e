"""`invincat memory list|show|log` print the same bytes through the quick reader as
through the full (pydantic) path, and fall back to the full path where the reader cannot
vouch for the files. The real console script, on a varied store (see test_reader.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from invincat_server.runtime.memory import MemoryService
from invincat_server.runtime.memory.reader import FULL_READ_ENV

from .test_reader import cited, varied  # noqa: F401  (the fixtures)

INVINCAT = Path(sys.executable).with_name("invincat")


def run(dirs: tuple[Path, Path], *args: str, full: bool) -> tuple[int, str, str]:
    home, project = dirs
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVINCAT_")}
    env["INVINCAT_HOME"] = str(home)
    env["COLUMNS"] = "100"
    if full:
        env[FULL_READ_ENV] = "1"
    done = subprocess.run(
        [str(INVINCAT), "memory", *args, "--cwd", str(project)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


def commands(service: MemoryService) -> list[list[str]]:
    ids = [e.id for e in service.list(include_archived=True)]
    found = [["list"], ["list", "--all"], ["list", "--scope", "user", "--tier", "warm", "--all"]]
    found += [["log"], ["log", "--limit", "2"], ["log", "--scope", "project"]]
    found += [["show", entry_id] for entry_id in [*ids, "mem_u_999999", "not-an-id"]]
    return [c + j for c in found for j in ([], ["--json"])]


def test_the_cli_prints_the_same_through_both_paths(
    varied: MemoryService,  # noqa: F811
    dirs: tuple[Path, Path],
) -> None:
    for args in commands(varied):
        quick = run(dirs, *args, full=False)
        assert quick == run(dirs, *args, full=True), args
        assert quick[0] == (2 if args[1:2] in (["mem_u_999999"], ["not-an-id"]) else 0), quick


def test_cited_entries_print_the_same_through_both_paths(
    cited: MemoryService,  # noqa: F811
    dirs: tuple[Path, Path],
) -> None:
    """Fresh, moved, renamed, changed, cut short, deleted and refused citations: the same
    `!` marks, `cites:` lines and verdicts, and the same JSON."""
    for args in commands(cited):
        quick = run(dirs, *args, full=False)
        assert quick == run(dirs, *args, full=True), args
    _, out, _ = run(dirs, "list", "--json", full=False)
    states = [c["state"] for e in json.loads(out)["items"] for c in e["verification"]["citations"]]
    assert sorted(set(states)) == ["changed", "fresh", "missing", "moved"], states


def test_a_damaged_entry_is_reported_through_both_paths(
    varied: MemoryService,  # noqa: F811
    dirs: tuple[Path, Path],
) -> None:
    """Not simple: the full path runs, lists the valid entries, names the bad one and
    writes nothing (no backup, no recovery)."""
    path = varied.store_paths()["user"]
    damaged = path.read_bytes().replace(b'"score":90', b'"score":900')
    assert damaged != path.read_bytes()
    path.write_bytes(damaged)
    code, out, _ = run(dirs, "list", "--scope", "user", full=False)
    assert code == 0 and "INVALID user items[" in out and "score" in out, out
    assert (code, out) == run(dirs, "list", "--scope", "user", full=True)[:2]
    assert path.read_bytes() == damaged
    assert list(path.parent.glob("memory_user.corrupt-*.json")) == []
    assert "recovery" not in run(dirs, "log", "--scope", "user", full=False)[1]


@pytest.mark.parametrize("where", ["store", "journal"])
def test_a_git_conflict_fails_the_command_as_before(
    where: str,
    varied: MemoryService,  # noqa: F811
    dirs: tuple[Path, Path],
) -> None:
    files = varied.files["project"]
    path = files.store if where == "store" else files.journal
    path.write_bytes(path.read_bytes() + b"<<<<<<< ours\n=======\n>>>>>>> theirs\n")
    for args in (["list"], ["log", "--json"], ["show", "mem_u_000001"]):
        quick = run(dirs, *args, full=False)
        assert quick == run(dirs, *args, full=True)
        assert quick[0] == 2 and "conflict" in quick[2], quick
