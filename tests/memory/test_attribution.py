"""Attribution (issue 25): each new entry records who proposed it (git's user.name and
user.email, else the OS user), the branch and the thread; `memory list/show` show it,
`memory log --author` filters on it, a pulled entry shows who wrote it, and a bad value
(from git or from a hand-edited store) costs that value or that entry only."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.memory import MemoryService
from invincat_server.runtime.memory.attribution import (
    Attributor,
    clean,
    current_branch,
    record_matches,
)
from invincat_server.runtime.memory.reader import FULL_READ_ENV

from .bad_stores import entry, store_text
from .gitrepo import INVINCAT, Repo, _git_env, needs_git
from .helpers import create

pytestmark = needs_git


def _env(home: Path, **extra: str) -> dict[str, str]:
    """No developer git config (GIT_CONFIG_GLOBAL=/dev/null) and a known OS user."""
    env = {k: v for k, v in _git_env().items() if not k.startswith("INVINCAT_")}
    env |= {"INVINCAT_HOME": str(home), "USER": "os-tester", "LOGNAME": "os-tester"}
    return env | extra


def _cli(repo: Repo, *args: str, stdin: str | None = None, **env: str) -> Any:
    done = subprocess.run(
        [str(INVINCAT), "memory", *args, "--cwd", str(repo.root)],
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(repo.home, **env),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done


def _remember(repo: Repo, content: str, **env: str) -> str:
    op = {"op": "create", "scope": "project", "section": "Conventions", "content": content}
    done = _cli(repo, "apply", "--scope", "project", "-", stdin=json.dumps([op]), **env)
    (applied,) = json.loads(done.stdout)["applied"]
    return str(applied["id"])


def _identify(repo: Repo, name: str, email: str) -> None:
    repo.git("config", "user.name", name)
    repo.git("config", "user.email", email)


def test_a_new_entry_records_the_git_author_branch_and_thread_and_the_cli_shows_it(
    tmp_path: Path,
) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    _identify(repo, "Ada Lovelace", "ada@example.com")
    repo.git("switch", "-q", "-c", "feature/api")
    entry_id = _remember(repo, "The API lives in src/api")

    shown = json.loads(_cli(repo, "show", entry_id, "--json").stdout)
    source = shown["entry"]["source"]
    assert source["author"] == {"name": "Ada Lovelace", "email": "ada@example.com"}
    assert source["branch"] == "feature/api" and source["actor"] == "cli"
    (record,) = shown["history"]
    assert record["author"] == source["author"] and record["branch"] == "feature/api"
    listed = json.loads(_cli(repo, "list", "--json").stdout)["items"]
    assert listed[0]["source"]["author"]["name"] == "Ada Lovelace"
    # The quick reader and the full service give the same JSON.
    for args in (["list", "--json"], ["show", entry_id, "--json"], ["log", "--json"]):
        quick = _cli(repo, *args).stdout
        assert _cli(repo, *args, **{FULL_READ_ENV: "1"}).stdout == quick, args

    text = _cli(repo, "list").stdout.splitlines()
    assert text[0].split()[:6] == ["ID", "SCOPE", "TIER", "SCORE", "STATUS", "BY"]
    assert "Ada Lovelace" in text[1]
    human = _cli(repo, "show", entry_id).stdout
    assert "author:      Ada Lovelace <ada@example.com>" in human
    assert "branch:      feature/api" in human

    # A session's batch carries its thread id too (the memory agent passes it).
    service = MemoryService(repo.home, repo.root)
    report = service.apply("project", [create()], actor="memory_agent", thread_id="t_1")
    (made,) = (e for e in service.list() if e.id == report.created_ids()[0])
    assert made.source.thread_id == "t_1" and made.source.author is not None


def test_memory_log_author_filters_by_a_part_of_name_or_email(tmp_path: Path) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    _identify(repo, "Ada Lovelace", "ada@example.com")
    ada = _remember(repo, "The API lives in src/api")
    _identify(repo, "Bob Byte", "bob@example.org")
    _remember(repo, "Migrations go in db/migrations")
    # Bob archives Ada's entry: the batch is Bob's, and it changed an entry of Ada's.
    _cli(repo, "archive", ada, "--reason", "moved")

    def batches(*args: str) -> list[str]:
        records = json.loads(_cli(repo, "log", "--json", *args).stdout)
        return [" ".join(f"{a['op']}" for a in r["applied"]) for r in records]

    assert batches("--author", "ADA") == ["archive", "create"]
    assert batches("--author", "example.org") == ["archive", "create"]
    assert batches("--author", "bob", "--limit", "1") == ["archive"]
    assert batches("--author", "carol") == []
    assert "No batches by 'carol'." in _cli(repo, "log", "--author", "carol").stdout
    assert "by Bob Byte <bob@example.org>" in _cli(repo, "log", "--author", "bob").stdout
    full = _cli(repo, "log", "--json", "--author", "ada", **{FULL_READ_ENV: "1"}).stdout
    assert full == _cli(repo, "log", "--json", "--author", "ada").stdout


def test_without_a_git_identity_the_os_user_is_the_author(tmp_path: Path) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    entry_id = _remember(repo, "Run make test before pushing")
    source = json.loads(_cli(repo, "show", entry_id, "--json").stdout)["entry"]["source"]
    assert source["author"] == {"name": "os-tester", "email": None}
    assert source["branch"] == "main"


def test_a_pulled_entry_shows_who_wrote_it(tmp_path: Path) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    _identify(repo, "Ada Lovelace", "ada@example.com")
    _remember(repo, "Run make test before pushing")
    repo.git("add", ".invincat")
    repo.git("commit", "-q", "-m", "memory")
    other = repo.clone(tmp_path / "other")
    other.home = tmp_path / "home-bob"
    _identify(other, "Bob Byte", "bob@example.org")
    bob = _remember(other, "Format with ruff")
    other.git("commit", "-q", "-am", "bob's memory")
    # Ada's session (it knows the store as it was before the pull) is running.
    session = MemoryService(repo.home, repo.root)
    session.cleanup()
    repo.git("pull", "-q", "--no-rebase", str(other.root), "main")

    listed = {e["id"]: e for e in json.loads(_cli(repo, "list", "--json").stdout)["items"]}
    assert listed[bob]["source"]["author"] == {"name": "Bob Byte", "email": "bob@example.org"}
    assert "Bob Byte" in _cli(repo, "list").stdout
    # Its next write journals the pull as `external`, entry by entry: Bob's entry in it.
    session.apply("project", [create()])
    records = json.loads(_cli(repo, "log", "--json", "--author", "bob").stdout)
    assert [r["actor"] for r in records] == ["external"]
    assert records[0]["author"] is None  # a pull has no author of its own


@pytest.mark.parametrize(
    ("name", "email", "expected"),
    [
        ("Ada\x1b[31m", "ada@example.com", {"name": "os-tester", "email": None}),
        ("A" * 101, "ada@example.com", {"name": "os-tester", "email": None}),
        (
            "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
            "x@y",
            {"name": "os-tester", "email": None},
        ),
        ("Ada", "a" * 250 + "@example.com", {"name": "Ada", "email": None}),
        ("  Ada  ", "ada@example.com", {"name": "Ada", "email": "ada@example.com"}),
        ("Zoë Ünal", "zoe@example.com", {"name": "Zoë Ünal", "email": "zoe@example.com"}),
    ],
)
def test_a_git_identity_that_may_not_be_stored_is_left_out(
    tmp_path: Path, name: str, email: str, expected: dict[str, Any]
) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    _identify(repo, name, email)
    entry_id = _remember(repo, "Run make test before pushing")
    source = json.loads(_cli(repo, "show", entry_id, "--json").stdout)["entry"]["source"]
    assert source["author"] == expected


def test_clean_refuses_what_a_stored_label_may_not_be() -> None:
    assert clean("Ada", 100) == "Ada"
    for bad in (None, 5, "", "  ", "a\x00b", "tab\there", "new\nline", "x" * 101):
        assert clean(bad, 100) is None, bad


def test_the_branch_comes_from_head_and_is_none_when_detached_or_outside_git(
    tmp_path: Path,
) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    assert current_branch(repo.root) == "main"
    assert current_branch(repo.root / "sub" / "dir") == "main"  # from below the root too
    repo.git("checkout", "-q", "--detach")
    assert current_branch(repo.root) is None
    repo.git("switch", "-q", "main")
    worktree = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "side", str(worktree))
    assert current_branch(worktree) == "side"  # `.git` is a file naming the git dir
    assert current_branch(tmp_path / "nowhere") is None
    (tmp_path / "weird" / ".git").mkdir(parents=True)
    (tmp_path / "weird" / ".git" / "HEAD").write_bytes(b"ref: refs/heads/a\x1bb\n")
    assert current_branch(tmp_path / "weird") is None


def test_git_missing_or_failing_falls_back_to_the_os_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    monkeypatch.setenv("USER", "os-tester")
    monkeypatch.setenv("LOGNAME", "os-tester")
    who = Attributor(tmp_path).current()
    assert who.author() == {"name": "os-tester", "email": None} and who.branch is None


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ({"author": 5}, "source.author"),
        ({"author": "Ada"}, "source.author"),
        ({"author": {}}, "source.author.name"),
        ({"author": {"name": "a\x00b"}}, "source.author.name"),
        ({"author": {"name": "A" * 101}}, "source.author.name"),
        ({"author": {"name": "Ada", "email": ["x"]}}, "source.author.email"),
        ({"author": {"name": "Ada", "email": "a\x1b@x"}}, "source.author.email"),
        ({"branch": "x" * 201}, "source.branch"),
        ({"branch": "a\nb"}, "source.branch"),
        ({"branch": 7}, "source.branch"),
    ],
)
def test_bad_stored_attribution_costs_that_entry_only(
    service: MemoryService, source: dict[str, Any], why: str
) -> None:
    path = service.store_paths()["project"]
    path.parent.mkdir()
    items = [entry(1), entry(2, source={"actor": "cli", **source}), entry(3)]
    path.write_text(store_text("project", items))
    assert [e.id for e in service.list()] == ["mem_p_000001", "mem_p_000003"]
    (bad,) = service.invalid_entries()
    assert bad.id == "mem_p_000002" and bad.reason.startswith(why), bad.reason


def test_stored_attribution_without_email_or_branch_loads_and_old_entries_stay_as_they_were(
    service: MemoryService,
) -> None:
    path = service.store_paths()["project"]
    path.parent.mkdir()
    items = [entry(1, source={"actor": "cli", "author": {"name": "Ada", "x_team": "core"}})]
    items.append(entry(2, source={"actor": "cli", "evidence": []}))
    path.write_text(store_text("project", items))
    first, second = service.list()
    assert first.to_json()["source"]["author"] == {"name": "Ada", "email": None, "x_team": "core"}
    assert "author" not in second.to_json()["source"] and "branch" not in second.to_json()["source"]


def test_record_matches_reads_plain_journal_dicts_whatever_they_hold() -> None:
    assert record_matches({"author": {"name": "Ada", "email": "a@x"}}, "A@X")
    assert not record_matches({"author": "Ada"}, "ada")
    odd = {"before": {"x": None, "y": 5}, "after": {"z": {"source": {"author": 3}}}}
    assert not record_matches(odd, "ada")
    entry_of_ada = {"source": {"author": {"name": "Ada"}}}
    assert record_matches({"before": {}, "after": {"mem_p_000001": entry_of_ada}}, "ada")


def test_attribution_costs_one_git_process_per_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from invincat_server.runtime.memory import attribution

    calls: list[Path] = []
    real = attribution.git_identity

    def counted(root: Path) -> tuple[str | None, str | None]:
        calls.append(root)
        return real(root)

    monkeypatch.setattr(attribution, "git_identity", counted)
    (tmp_path / "project" / ".git").mkdir(parents=True)
    os.environ.setdefault("USER", "os-tester")
    service = MemoryService(tmp_path / "home", tmp_path / "project")
    for _ in range(3):
        service.apply("project", [create()])
    assert len(calls) == 1


def test_attribution_never_reaches_a_model(tmp_path: Path) -> None:
    from invincat_server.runtime.memory_agent.prompt import snapshot_text

    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    _identify(repo, "Ada Lovelace", "ada@example.com")
    service = MemoryService(repo.home, repo.root)
    service.apply("project", [create(score=85)])
    (made,) = service.list()
    assert made.source.author is not None and made.source.author.name == "Ada Lovelace"
    seen = service.render_injection() + snapshot_text([e.to_json() for e in service.list()])
    assert made.content in seen
    assert "Ada" not in seen and "example.com" not in seen and "main" not in seen
