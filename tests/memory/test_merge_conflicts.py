"""A project store shared through git, merged by real `git merge`: a conflicted store or
journal is named with the way out, left byte-identical, and never reset or backed up."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from invincat_server.runtime.events import Error
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

from .gitrepo import Repo, needs_git

pytestmark = needs_git


def _diverge(repo: Repo, *, track_journal: bool = False) -> list[str]:
    """Two clones each add an entry after a shared one; `repo` then fetches the other's
    work as branch `feature`, ready to `git merge feature`. Returns the three ids."""
    shared = repo.remember("Shared: run ./scripts/test before pushing")
    if track_journal:  # a team that shares the journal against the .gitignore's advice
        repo.git("add", "-f", str(repo.journal))
    repo.git("add", ".invincat")
    repo.git("commit", "-q", "-m", "shared memory")
    other = repo.clone(repo.root.with_name("other"))
    feature = other.remember("Feature: the API lives in src/api")
    other.git("commit", "-q", "-am", "feature memory")
    main = repo.remember("Main: lint with ruff")
    repo.git("commit", "-q", "-am", "main memory")
    repo.git("fetch", "-q", str(other.root), "main:feature")
    return [shared, feature, main]


def _assert_refused(repo: Repo, conflicted: Path, *commands: list[str]) -> None:
    before = {p: p.read_bytes() for p in (repo.store, repo.journal)}
    for args in commands:
        done = repo.memory(*args, stdin="[]")
        assert done.returncode != 0, (args, done.stdout)
        assert str(conflicted) in done.stderr and "git merge" in done.stderr, done.stderr
        assert "git checkout --ours" in done.stderr
    assert {p: p.read_bytes() for p in before} == before  # byte for byte, store and journal
    assert not list(repo.store.parent.glob("memory_project.corrupt-*"))  # never "recovered"


def test_a_conflicted_store_is_refused_untouched_until_resolved(tmp_path: Path) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    _diverge(repo)
    assert repo.git("merge", "feature", check=False).returncode != 0
    assert b"<<<<<<<" in repo.store.read_bytes()

    _assert_refused(
        repo,
        repo.store,
        ["list"],
        ["list", "--scope", "project"],
        ["log"],
        ["show", "mem_p_000001"],
        ["apply", "--scope", "project", "-"],
        ["delete", "mem_p_000001", "--reason", "try"],
    )
    # The user scope is unaffected when asked for alone.
    assert repo.memory("list", "--scope", "user").returncode == 0

    # Way out 1: take one side whole.
    repo.git("checkout", "--theirs", "--", str(repo.store))
    assert repo.contents() == [
        "Feature: the API lives in src/api",
        "Shared: run ./scripts/test before pushing",
    ]


def _update(repo: Repo, entry_id: str, content: str) -> None:
    op = {"op": "update", "scope": "project", "id": entry_id, "content": content}
    done = repo.memory("apply", "--scope", "project", "-", stdin=json.dumps([op]))
    assert done.returncode == 0 and json.loads(done.stdout)["applied"], done.stderr


def test_keeping_both_versions_of_an_entry_changed_on_both_sides_is_refused_until_one_goes(
    tmp_path: Path,
) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    shared = repo.remember("Run ./scripts/test before pushing")
    repo.git("add", ".invincat")
    repo.git("commit", "-q", "-m", "shared memory")
    other = repo.clone(repo.root.with_name("other"))
    _update(other, shared, "Run ./scripts/test -q before pushing")
    other.git("commit", "-q", "-am", "feature memory")
    _update(repo, shared, "Run ./scripts/test before every push")
    repo.git("commit", "-q", "-am", "main memory")
    repo.git("fetch", "-q", str(other.root), "main:feature")
    assert repo.git("merge", "feature", check=False).returncode != 0
    # Resolve by hand the way a person might: both sides' entries in one valid JSON file.
    ours = json.loads(repo.git("show", f":2:{repo.store.relative_to(repo.root)}").stdout)
    theirs = json.loads(repo.git("show", f":3:{repo.store.relative_to(repo.root)}").stdout)
    ours["items"] += theirs["items"]
    repo.store.write_text(json.dumps(ours, indent=2))
    repo.git("add", str(repo.store))

    _assert_refused(repo, repo.store, ["list"], ["apply", "--scope", "project", "-"])
    done = repo.memory("list")
    assert f"two entries with the id {shared}" in done.stderr
    assert "if both are the same entry, delete one" in done.stderr
    suggested = re.search(r"a new id, such as (mem_p_[0-9a-z]+) ", done.stderr)
    assert suggested is not None, done.stderr

    # Way out: the person keeps both as two facts, under the id the message offers.
    ours["items"][-1]["id"] = suggested.group(1)
    repo.store.write_text(json.dumps(ours, indent=2))
    assert repo.contents() == [
        "Run ./scripts/test -q before pushing",
        "Run ./scripts/test before every push",
    ]
    assert repo.remember("After the merge") not in (shared, suggested.group(1))


def test_numbered_ids_of_older_versions_that_clash_are_named_with_a_free_new_id(
    tmp_path: Path,
) -> None:
    from .bad_stores import entry, store_text

    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    repo.store.parent.mkdir()
    both = [entry(1), entry(2, content="main fact"), entry(2, content="feature fact")]
    repo.store.write_text(store_text("project", both, next_seq=3))
    done = repo.memory("list")
    assert done.returncode == 2 and "two entries with the id mem_p_000002" in done.stderr
    assert "older versions of invincat gave two new entries the same number" in done.stderr
    assert "next_seq" not in done.stderr


def test_a_conflicted_journal_is_refused_untouched_until_resolved(tmp_path: Path) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    ids = _diverge(repo, track_journal=True)
    assert repo.git("merge", "feature", check=False).returncode != 0
    repo.git("checkout", "--theirs", "--", str(repo.store))  # only the journal stays conflicted
    journal = repo.journal.read_bytes()
    assert b"<<<<<<<" in journal and b">>>>>>>" in journal

    _assert_refused(repo, repo.journal, ["list"], ["log"], ["apply", "--scope", "project", "-"])
    assert "git rm --cached" in repo.memory("log").stderr

    # Resolve as the message says: keep both sides' lines, drop the markers.
    kept = [
        line
        for line in journal.splitlines(keepends=True)
        if not line.startswith((b"<<<<<<<", b"=======", b">>>>>>>", b"|||||||"))
    ]
    repo.journal.write_bytes(b"".join(kept))
    log = repo.memory("log", "--json")
    assert log.returncode == 0, log.stderr
    created = {a["id"] for r in json.loads(log.stdout) for a in r["applied"] if a["op"] == "create"}
    assert set(ids) <= created
    repo.remember("After the merge")


CONFLICTED_STORE = b"""{
  "version": 1,
  "scope": "project",
<<<<<<< HEAD
  "next_seq": 2,
  "items": [
    {"id": "mem_p_000001", "scope": "project"}
  ]
=======
  "next_seq": 2,
  "items": []
>>>>>>> feature
}
"""


async def test_chat_works_without_the_conflicted_store_and_says_why_once(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    workspace: Path,
    invincat_home: Path,
) -> None:
    user = Repo(workspace, invincat_home)  # only for the CLI helper (no git needed here)
    done = user.memory(
        "apply",
        "--scope",
        "user",
        "-",
        stdin=json.dumps(
            [{"op": "create", "scope": "user", "section": "Prefs", "content": "Terse answers"}]
        ),
    )
    assert done.returncode == 0, done.stderr
    store = workspace / ".invincat" / "memory_project.json"
    store.parent.mkdir(exist_ok=True)
    store.write_bytes(CONFLICTED_STORE)

    fake_openai.add_steps([{"content": "First."}, {"content": "Second."}])
    session = await make_session()
    thread_id, first = await run_turn(session, "hello", follow=True)
    _, second = await run_turn(session, "again", thread_id, follow=True)

    assert first[-1].status == "completed" and second[-1].status == "completed"
    told = [e.message for e in first + second if isinstance(e, Error)]
    assert len(told) == 1, told
    assert str(store) in told[0] and "without project memory" in told[0]
    for request in fake_openai.chat_requests():
        system = request["messages"][0]["content"]
        assert "Terse answers" in system  # the user store is still injected
        assert "mem_p_000001" not in system and "### Project" not in system
    assert store.read_bytes() == CONFLICTED_STORE
    assert not list(store.parent.glob("memory_project.corrupt-*"))


@pytest.mark.parametrize("marker", [b"<<<<<<< HEAD", b"||||||| base", b"=======", b">>>>>>> x"])
def test_every_marker_kind_is_recognised(marker: bytes) -> None:
    from invincat_server.runtime.memory.conflicts import conflict_marker_line

    assert conflict_marker_line(b'{"a": 1,\n' + marker + b"\r\n}") == 2
    assert conflict_marker_line(b'{"content": "a <<<<<<< b ======= c"}\n') is None


async def test_the_language_server_names_the_conflict_and_leaves_the_store(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    from pygls.exceptions import JsonRpcException

    from tests.lsp.client import start_client, stop_client

    store = workspace / ".invincat" / "memory_project.json"
    store.parent.mkdir(exist_ok=True)
    store.write_bytes(CONFLICTED_STORE)
    lsp = await start_client(invincat_env, workspace, "neovim")
    try:
        for method, params in (
            ("invincat/memory/list", {}),
            ("invincat/memory/show", {"id": "mem_p_000001"}),
            ("invincat/memory/apply", {"scope": "project", "operations": [{"op": "noop"}]}),
        ):
            with pytest.raises(JsonRpcException) as caught:
                await lsp.request(method, params)
            assert caught.value.code == -32014, method
            assert str(store.resolve()) in caught.value.message
            assert "git merge conflict markers" in caught.value.message
        assert store.read_bytes() == CONFLICTED_STORE

        store.write_text('{"version": 1, "scope": "project", "next_seq": 1, "items": []}\n')
        assert (await lsp.request("invincat/memory/list", {}))["items"] == []
    finally:
        await stop_client(lsp)


async def test_chat_with_a_conflicted_journal_still_injects_the_store_and_says_why_once(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    workspace: Path,
    invincat_home: Path,
) -> None:
    repo = Repo(workspace, invincat_home)  # only for the CLI helper (no git needed here)
    repo.remember("Project fact from the store")
    journal = repo.journal.read_bytes()
    conflicted = b"<<<<<<< HEAD\n" + journal + b"=======\n" + journal + b">>>>>>> feature\n"
    repo.journal.write_bytes(conflicted)
    store = repo.store.read_bytes()

    fake_openai.add_steps([{"content": "First."}, {"content": "Second."}, {"content": "Third."}])
    session = await make_session()
    thread_id, first = await run_turn(session, "one", follow=True)
    _, second = await run_turn(session, "two", thread_id, follow=True)
    _, third = await run_turn(session, "three", thread_id, follow=True)

    assert all(t[-1].status == "completed" for t in (first, second, third))
    told = [e.message for e in first + second + third if isinstance(e, Error)]
    assert len(told) == 1 and str(repo.journal) in told[0], told
    for request in fake_openai.chat_requests():
        assert "Project fact from the store" in request["messages"][0]["content"]
    assert repo.journal.read_bytes() == conflicted and repo.store.read_bytes() == store
