"""`invincat memory ...` end to end: the real console script in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

INVINCAT = Path(sys.executable).with_name("invincat")


class Cli:
    def __init__(self, home: Path, project: Path) -> None:
        self.home, self.project = home, project
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("INVINCAT_")}
        self.env["INVINCAT_HOME"] = str(home)

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(INVINCAT), "memory", *args, "--cwd", str(self.project)],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=60,
        )


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    return Cli(home, project / "src")  # --cwd below the root still finds the project


def _batch(*ops: dict[str, object]) -> str:
    return json.dumps({"operations": list(ops)})


def test_apply_list_show_log_archive_restore_delete_revert(cli: Cli, tmp_path: Path) -> None:
    batch_file = tmp_path / "batch.json"
    batch_file.write_text(
        _batch(
            {
                "op": "create",
                "scope": "project",
                "section": "Testing",
                "content": "Run ./scripts/test",
            },
            {
                "op": "create",
                "scope": "project",
                "section": "Tooling",
                "content": "Lint with ruff",
                "score": 80,
            },
        )
    )
    applied = cli("apply", "--scope", "project", str(batch_file))
    assert applied.returncode == 0, applied.stderr
    report = json.loads(applied.stdout)
    ids = [a["id"] for a in report["applied"]]
    assert len(ids) == 2 and ids == sorted(ids) and all(i.startswith("mem_p_") for i in ids)
    assert (cli.project.parent / ".invincat" / "memory_project.json").exists()

    from_stdin = cli(
        "apply",
        "--scope",
        "user",
        "-",
        stdin=_batch(
            {"op": "create", "scope": "user", "section": "Prefs", "content": "Terse answers"}
        ),
    )
    assert from_stdin.returncode == 0, from_stdin.stderr
    user_id = json.loads(from_stdin.stdout)["applied"][0]["id"]
    assert user_id.startswith("mem_u_")
    assert (cli.home / "memory_user.json").exists()

    listing = cli("list")
    assert listing.returncode == 0
    assert user_id in listing.stdout and "Lint with ruff" in listing.stdout
    as_json = json.loads(cli("list", "--scope", "project", "--json").stdout)
    assert [e["id"] for e in as_json["items"]] == ids
    assert as_json["stores"]["project"].endswith("memory_project.json")

    assert cli("archive", ids[0], "--reason", "moved to CI").returncode == 0
    assert [e["id"] for e in json.loads(cli("list", "--json").stdout)["items"]] == [
        user_id,
        ids[1],
    ]
    everything = json.loads(cli("list", "--all", "--json").stdout)["items"]
    assert {e["id"]: e["status"] for e in everything}[ids[0]] == "archived"
    assert cli("restore", ids[0], "--reason", "back").returncode == 0
    refused = cli("restore", ids[0], "--reason", "again")
    assert refused.returncode == 3 and "not archived" in refused.stderr

    shown = json.loads(cli("show", ids[0], "--json").stdout)
    assert shown["entry"]["status"] == "active"
    assert [h["actor"] for h in shown["history"]] == ["cli", "user", "user", "user"]
    human = cli("show", ids[0])
    assert (
        human.returncode == 0
        and "Run ./scripts/test" in human.stdout
        and "History:" in human.stdout
    )

    deleted = cli("delete", ids[1], "--reason", "wrong", "--json", "--yes")
    assert deleted.returncode == 0
    delete_batch = json.loads(deleted.stdout)["batch_id"]

    log = json.loads(cli("log", "--json").stdout)
    assert log[0]["batch_id"] == delete_batch and log[0]["actor"] == "user"
    assert "delete " + ids[1] in cli("log", "--scope", "project").stdout

    reverted = cli("revert", delete_batch, "--json")
    assert reverted.returncode == 0, reverted.stderr
    revert_report = json.loads(reverted.stdout)
    assert revert_report["reverts"] == delete_batch
    assert revert_report["applied"][0]["restored_from"] == ids[1]
    contents = [e["content"] for e in json.loads(cli("list", "--json").stdout)["items"]]
    assert "Lint with ruff" in contents


def test_exit_codes_for_rejected_and_unreadable_input(cli: Cli, tmp_path: Path) -> None:
    conflict = _batch(
        {"op": "create", "scope": "project", "section": "S", "content": "first fact"},
    )
    assert cli("apply", "--scope", "project", "-", stdin=conflict).returncode == 0
    rejected = cli(
        "apply",
        "--scope",
        "project",
        "-",
        stdin=_batch(
            {"op": "update", "scope": "project", "id": "mem_p_000001", "content": "x y z"},
            {"op": "archive", "scope": "project", "id": "mem_p_000001", "reason": "r"},
        ),
    )
    assert rejected.returncode == 3 and json.loads(rejected.stdout)["rejected"] is True

    for stdin in ["{not json", '"just a string"', '{"ops": []}', '{"operations": 3}']:
        result = cli("apply", "--scope", "project", "-", stdin=stdin)
        assert result.returncode == 2, (stdin, result.stdout, result.stderr)
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("invincat memory:")
    not_utf8 = tmp_path / "latin1.json"
    not_utf8.write_bytes(b'{"operations": [], "note": "caf\xe9"}')
    result = cli("apply", "--scope", "project", str(not_utf8))
    assert result.returncode == 2 and "not UTF-8" in result.stderr
    missing = cli("apply", "--scope", "project", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    assert cli("revert", "b_unknown").returncode == 2
    assert cli("show", "mem_p_000999").returncode == 2
    assert cli("archive", "not-an-id", "--reason", "x").returncode == 2


def test_corrupt_store_is_reported_by_the_cli(cli: Cli) -> None:
    store = cli.project.parent / ".invincat" / "memory_project.json"
    store.parent.mkdir()
    store.write_bytes(b"{broken")
    listing = cli("list", "--json")
    assert listing.returncode == 0 and json.loads(listing.stdout)["items"] == []
    assert "is not valid JSON" in listing.stderr and "left it untouched" in listing.stderr
    # A read never backs up or resets: that is the next write's job.
    assert store.read_bytes() == b"{broken"
    assert list(store.parent.glob("memory_project.corrupt-*.json")) == []
    batch = [{"op": "create", "scope": "project", "section": "S", "content": "f"}]
    applied = cli("apply", "--scope", "project", "-", stdin=json.dumps(batch))
    assert applied.returncode == 0, applied.stderr
    backups = list(store.parent.glob("memory_project.corrupt-*.json"))
    assert len(backups) == 1 and backups[0].read_bytes() == b"{broken"
    log = cli("log")
    assert "recovery" in log.stdout


def test_apply_with_citations_and_verify_exit_codes(cli: Cli, tmp_path: Path) -> None:
    root = cli.project.parent
    (root / "scripts").mkdir()
    (root / "scripts" / "deploy.sh").write_text("#!/bin/sh\n./build.sh --release\n")
    cited = {
        "op": "create",
        "scope": "project",
        "section": "Deploy",
        "content": "Deploy builds with --release",
        "citations": [{"path": "scripts/deploy.sh", "start_line": 2, "end_line": 2}],
    }
    outside = dict(
        cited, content="other", citations=[{"path": "../x", "start_line": 1, "end_line": 1}]
    )
    applied = cli("apply", "--scope", "project", "-", stdin=_batch(cited, outside))
    report = json.loads(applied.stdout)
    assert applied.returncode == 0 and len(report["applied"]) == 1
    assert "outside the project" in report["dropped"][0]["reason"]

    fresh = cli("verify")
    assert fresh.returncode == 0 and "1 cited entry checked: 0 stale" in fresh.stdout

    (root / "scripts" / "deploy.sh").write_text("#!/bin/sh\n./build.sh --debug\n")
    stale = cli("verify")
    assert stale.returncode == 1, stale.stderr
    assert "stale  scripts/deploy.sh line 2 changed" in stale.stdout
    as_json = json.loads(cli("verify", "--json").stdout)
    assert as_json["stale"] == 1 and as_json["entries"][0]["state"] == "stale"
    listed = json.loads(cli("list", "--json").stdout)
    assert listed["items"][0]["stale"] is True


def test_reverting_a_batch_twice_says_it_was_already_reverted(cli: Cli) -> None:
    created = cli(
        "apply",
        "--scope",
        "project",
        "-",
        stdin=_batch({"op": "create", "scope": "project", "section": "S", "content": "a fact"}),
    )
    batch = json.loads(created.stdout)["batch_id"]
    first = cli("revert", batch)
    assert first.returncode == 0, first.stderr
    journaled = len(json.loads(cli("log", "--json").stdout))
    undo = json.loads(cli("log", "--json").stdout)[0]["batch_id"]

    for extra in ((), ("--json",)):
        again = cli("revert", batch, *extra)
        assert again.returncode == 3, again.stderr
        assert again.stdout == ""
        assert again.stderr == (
            f"invincat memory: batch {batch} was already reverted by batch {undo}; "
            f"nothing changed (revert {undo} to re-do it).\n"
        )
        assert "#None" not in again.stderr
    # Nothing was journaled by the refused reverts.
    assert len(json.loads(cli("log", "--json").stdout)) == journaled

    # Reverting the revert re-does the batch (under a new id): the batch no longer counts
    # as reverted, and the revert of the re-done one is refused as usual.
    assert cli("revert", undo).returncode == 0
    assert [e["content"] for e in json.loads(cli("list", "--json").stdout)["items"]] == ["a fact"]
    redo = json.loads(cli("log", "--json").stdout)[0]["batch_id"]
    assert "already reverted" not in cli("revert", batch).stderr
    assert f"already reverted by batch {redo}" in cli("revert", undo).stderr


def test_a_revert_blocked_by_a_later_change_names_the_entry_without_an_index(cli: Cli) -> None:
    created = cli(
        "apply",
        "--scope",
        "project",
        "-",
        stdin=_batch({"op": "create", "scope": "project", "section": "S", "content": "a fact"}),
    )
    batch = json.loads(created.stdout)["batch_id"]
    (entry_id,) = (a["id"] for a in json.loads(created.stdout)["applied"])
    assert cli("archive", entry_id, "--reason", "later change").returncode == 0
    blocked = cli("revert", batch)
    assert blocked.returncode == 3
    assert "#None" not in blocked.stderr
    assert f"dropped: revert: {entry_id} was modified after batch" in blocked.stderr
