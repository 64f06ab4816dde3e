"""A team sharing project memory through real git with the governed merge driver.

Two clones of one bare repository, each a teammate with their own journal, add entries
through the real `invincat memory` CLI and through real `invincat chat` turns whose
memory agent (scripted on the fake server) proposes them, and pull from each other:
`git pull` (merge and rebase), `git cherry-pick`, an update against a delete, a bad
pushed store, and the same conflict without the driver. git runs the real `invincat
memory merge-driver` that `invincat memory share` registered. The developer's git
configuration is never read: HOME and GIT_CONFIG_GLOBAL point into the test's folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.memory import MemoryService
from invincat_server.runtime.memory.dedupe import normalise
from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import FAKE_MODEL, invincat_env_overrides
from tests.deadlines import DEADLINE

from .credentials import credentials
from .gitrepo import INVINCAT, needs_git

pytestmark = needs_git

MEMORY_MODEL = "memory-model"
SHARED = "Shared: run ./scripts/test before pushing"
# Five facts both teammates write down, in slightly different words: one fact each.
NEAR = [
    ("Lint with ruff check", "lint with Ruff check."),
    ("Type-check with mypy --strict", "type check with mypy --strict"),
    ("The API lives in src/api", "the api lives in src/api!"),
    ("Format with ruff format before committing", "Format with ruff format, before committing"),
    ("Migrations go in db/migrations", "migrations go in db/migrations."),
]


class Clone:
    """One teammate's clone: git and `invincat memory` with a private HOME."""

    def __init__(self, root: Path, sandbox: Path) -> None:
        self.root = root
        self.home = sandbox / "invincat-home"
        self.git_home = sandbox / "git-home"
        self.store = root / ".invincat" / "memory_project.json"
        self.journal = root / ".invincat" / "memory_project.journal.jsonl"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INVINCAT_", "GIT_"))}
        self.git_home.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        env.update(
            HOME=str(self.git_home),
            GIT_CONFIG_GLOBAL=str(self.git_home / "gitconfig"),
            GIT_CONFIG_NOSYSTEM="1",
            INVINCAT_HOME=str(self.home),
            GIT_EDITOR="true",
        )
        return env

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", "-C", str(self.root), *args],
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=DEADLINE,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
        return done

    def memory(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(INVINCAT), "memory", *args, "--cwd", str(self.root)],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=DEADLINE,
        )

    def apply(self, *ops: dict[str, Any]) -> list[str]:
        done = self.memory("apply", "--scope", "project", "-", stdin=json.dumps(list(ops)))
        assert done.returncode == 0, done.stderr
        return [a["id"] for a in json.loads(done.stdout)["applied"] if a["op"] == "create"]

    def add(self, *contents: str) -> list[str]:
        return self.apply(
            *(
                {"op": "create", "scope": "project", "section": "Conventions", "content": c}
                for c in contents
            )
        )

    def chat_remembering(self, server: FakeOpenAIServer, *facts: str) -> None:
        """One real one-shot `invincat chat` turn; after it, the memory agent (its model
        scripted on `server`) proposes `facts` as project entries, governed as always."""
        operations = [
            {
                "op": "create",
                "scope": "project",
                "section": "Conventions",
                "content": fact,
                "confidence": "high",
                "score": 85,
                "score_reason": "the user asked to remember it",
            }
            for fact in facts
        ]
        call = {"name": "submit_memory_operations", "arguments": {"operations": operations}}
        server.add_steps(
            [
                {"match": {"model": FAKE_MODEL}, "content": "Noted."},
                {"match": {"model": MEMORY_MODEL}, "tool_calls": [call]},
            ]
        )
        env = self.env()
        overrides, remove = invincat_env_overrides(self.home, self.git_home, server.base_url, env)
        for name in remove:
            env.pop(name, None)
        env.update(overrides)
        # The chat's own process (no warm server), with the memory agent on.
        env.update(
            INVINCAT_WARM="0",
            INVINCAT_MEMORY_EXTRACTION="on",
            INVINCAT_MEMORY_MODEL=MEMORY_MODEL,
        )
        prompt = "remember these conventions: " + "; ".join(facts)
        done = subprocess.run(
            [str(INVINCAT), "chat", prompt, "--json", "--cwd", str(self.root)],
            capture_output=True,
            text=True,
            env=env,
            timeout=DEADLINE,
        )
        assert done.returncode == 0, done.stderr
        log = json.loads(self.memory("log", "--json").stdout)
        created = {
            a["id"]
            for r in log
            if r["actor"] == "memory_agent"
            for a in r["applied"]
            if a["op"] == "create"
        }
        contents = {i["content"] for i in self.items() if i["id"] in created}
        assert contents == set(facts), (contents, done.stderr)

    def share(self) -> None:
        done = self.memory("share")
        assert done.returncode == 0, done.stderr

    def items(self) -> list[dict[str, Any]]:
        done = self.memory("list", "--all", "--json")
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout)["items"])

    def merges(self) -> list[dict[str, Any]]:
        done = self.memory("log", "--json")
        assert done.returncode == 0, done.stderr
        return [r for r in json.loads(done.stdout) if r["actor"] == "merge"]


@pytest.fixture
def team(tmp_path: Path) -> tuple[Clone, Clone]:
    """Alice's and Bob's clones of one bare repository holding one shared entry, the
    driver named in the committed .gitattributes and defined in each clone's config."""
    origin = tmp_path / "origin.git"
    alice = Clone(tmp_path / "alice", tmp_path / "alice-env")
    bob = Clone(tmp_path / "bob", tmp_path / "bob-env")
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", "main", str(origin)],
        check=True,
        env=alice.env(),
        timeout=DEADLINE,
    )
    for clone in (alice, bob):
        subprocess.run(
            ["git", "clone", "-q", str(origin), str(clone.root)],
            check=True,
            capture_output=True,
            env=clone.env(),
            timeout=DEADLINE,
        )
        clone.git("config", "user.name", clone.root.name)
        clone.git("config", "user.email", f"{clone.root.name}@example.com")
    alice.share()
    alice.add(SHARED)
    alice.git("add", ".gitattributes", ".invincat")
    alice.git("commit", "-q", "-m", "share project memory")
    alice.git("push", "-q", "origin", "HEAD:main")
    bob.git("pull", "-q", "origin", "main")
    bob.share()
    return alice, bob


def _facts(clone: Clone) -> list[str]:
    return sorted(normalise(item["content"]) for item in clone.items())


def _check_invariants(clone: Clone) -> None:
    """The store loads whole through the service (ids unique, every entry valid), and
    nothing of Invincat's is left for git to commit but the store and .gitattributes."""
    service = MemoryService(clone.home, clone.root)
    entries = service.list(include_archived=True)
    assert len({e.id for e in entries}) == len(entries)
    assert not service.problems() and not service.invalid_entries()
    assert not any(line.startswith("UU") for line in clone.git("status", "--porcelain").stdout)


def test_two_teammates_pull_both_ways_and_every_fact_is_kept_once(
    team: tuple[Clone, Clone], fake_openai: FakeOpenAIServer
) -> None:
    alice, bob = team
    alice_only = [f"Alice fact {n}: module a{n} owns the q{n} queue" for n in range(15)]
    bob_only = [f"Bob fact {n}: service b{n} reads table t{n}" for n in range(15)]
    # Each teammate's 20 entries: some through the memory CLI, some proposed by the
    # memory agent after a chat turn (two of them near-duplicates of the other's).
    alice.add(*alice_only[:10], *(a for a, _ in NEAR[2:]))
    alice.chat_remembering(fake_openai, *alice_only[10:], *(a for a, _ in NEAR[:2]))
    bob.chat_remembering(fake_openai, *bob_only[:5], *(b for _, b in NEAR[:2]))
    bob.add(*bob_only[5:], *(b for _, b in NEAR[2:]))
    assert len(alice.items()) == len(bob.items()) == 21  # the shared entry and 20 each
    for clone in (alice, bob):
        clone.git("commit", "-q", "-am", f"{clone.root.name}'s memory")
    alice.git("push", "-q", "origin", "HEAD:main")

    pulled = bob.git("pull", "--no-rebase", "origin", "main", check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert "CONFLICT" not in pulled.stdout and "merged .invincat/memory_project.json" in (
        pulled.stderr
    )
    bob.git("push", "-q", "origin", "HEAD:main")
    alice.git("pull", "-q", "--no-rebase", "origin", "main")

    expected = sorted(normalise(f) for f in [SHARED, *alice_only, *bob_only, *(b for _, b in NEAR)])
    assert _facts(bob) == expected  # a near-duplicate keeps ours (Bob's) wording
    assert alice.store.read_bytes() == bob.store.read_bytes()
    (merge,) = bob.merges()
    lost = [a for a in merge["applied"] if a["op"] == "noop"]
    assert sorted(a["lost"]["content"] for a in lost) == sorted(a for a, _ in NEAR)
    # Ids that cannot clash (ids.py): no fact needed a new one to be kept.
    assert not [a for a in merge["applied"] if a.get("reid_from")]

    # The other way round: Bob pushes first, Alice merges.
    alice.add("Alice again: releases are tagged vX.Y.Z")
    bob.add("Bob again: feature flags live in flags.toml")
    for clone in (alice, bob):
        clone.git("commit", "-q", "-am", "more memory")
    bob.git("push", "-q", "origin", "HEAD:main")
    alice.git("pull", "-q", "--no-rebase", "origin", "main")
    # A merge needs no `external` batch: the journal already describes the merged store
    # (a fast-forward pull, like Alice's first one, is journaled as `external` as before).
    externals = len(
        [r for r in json.loads(alice.memory("log", "--json").stdout) if r["actor"] == "external"]
    )
    alice.add("After the merge: one more fact")
    log = json.loads(alice.memory("log", "--json").stdout)
    assert len([r for r in log if r["actor"] == "external"]) == externals
    alice.git("commit", "-q", "-am", "after the merge")
    alice.git("push", "-q", "origin", "HEAD:main")
    bob.git("pull", "-q", "--no-rebase", "origin", "main")
    assert len(alice.items()) == len(expected) + 3
    assert alice.store.read_bytes() == bob.store.read_bytes()
    assert len(alice.merges()) == 1
    for clone in (alice, bob):
        _check_invariants(clone)


def test_update_against_delete_and_both_changed_resolve_by_the_rule_and_revert(
    team: tuple[Clone, Clone],
) -> None:
    alice, bob = team
    kept, changed = alice.add("Deploys go through the release branch", "CI runs on every push")
    alice.git("commit", "-q", "-am", "two facts")
    alice.git("push", "-q", "origin", "HEAD:main")
    bob.git("pull", "-q", "origin", "main")

    done = alice.memory("delete", kept, "--reason", "obsolete", "--yes")
    assert done.returncode == 0, done.stderr
    alice.apply({"op": "update", "scope": "project", "id": changed, "content": "CI: every push"})
    bob.apply(
        {"op": "update", "scope": "project", "id": kept, "content": "Deploys: release branch"}
    )
    # Bob's change is the later one.
    bob.apply({"op": "update", "scope": "project", "id": changed, "content": "CI runs on tags"})
    for clone in (alice, bob):
        clone.git("commit", "-q", "-am", "diverging edits")
    bob.git("push", "-q", "origin", "HEAD:main")
    alice.git("pull", "-q", "--no-rebase", "origin", "main")

    by_id = {item["id"]: item["content"] for item in alice.items()}
    assert by_id[kept] == "Deploys: release branch"  # change beats delete
    assert by_id[changed] == "CI runs on tags"  # the later updated_at wins
    (merge,) = alice.merges()
    rules = {a["id"]: a for a in merge["applied"]}
    assert rules[kept]["lost"] == "deleted by ours"
    assert rules[changed]["lost"]["content"] == "CI: every push"  # kept in this journal

    reverted = alice.memory("revert", merge["batch_id"])
    assert reverted.returncode == 0, reverted.stderr
    by_id = {item["id"]: item["content"] for item in alice.items()}
    assert kept not in by_id and by_id[changed] == "CI: every push"


def test_rebase_and_cherry_pick_merge_through_the_driver(team: tuple[Clone, Clone]) -> None:
    alice, bob = team
    alice.add("Alice: the cache is redis")
    alice.git("commit", "-q", "-am", "alice")
    alice.git("push", "-q", "origin", "HEAD:main")
    bob.add("Bob: logs go to stderr")
    bob.git("commit", "-q", "-am", "bob 1")
    bob.add("Bob: config is TOML")
    bob.git("commit", "-q", "-am", "bob 2")

    rebased = bob.git("pull", "--rebase", "origin", "main", check=False)
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    assert _facts(bob) == sorted(
        normalise(f)
        for f in (
            SHARED,
            "Alice: the cache is redis",
            "Bob: logs go to stderr",
            "Bob: config is TOML",
        )
    )
    assert len(bob.merges()) == 2  # one per replayed commit
    _check_invariants(bob)

    bob.git("checkout", "-q", "-b", "topic")
    bob.add("Topic: the parser is hand-written")
    bob.git("commit", "-q", "-am", "topic")
    bob.git("checkout", "-q", "main")
    bob.add("Main: docs are in docs/")
    bob.git("commit", "-q", "-am", "main")
    picked = bob.git("cherry-pick", "topic", check=False)
    assert picked.returncode == 0, picked.stdout + picked.stderr
    contents = {item["content"] for item in bob.items()}
    assert {"Topic: the parser is hand-written", "Main: docs are in docs/"} <= contents
    _check_invariants(bob)


def test_a_pushed_store_with_a_secret_is_refused_with_the_reason(
    team: tuple[Clone, Clone],
) -> None:
    alice, bob = team
    secret = credentials()[0]
    # A hand edit behind governance's back, committed and pushed.
    doc = json.loads(alice.store.read_text())
    doc["items"][0] = {**doc["items"][0], "content": f"deploy with {secret.text}"}
    alice.store.write_text(json.dumps(doc))
    alice.git("commit", "-q", "-am", "oops")
    alice.git("push", "-q", "origin", "HEAD:main")
    bob.add("Bob: meanwhile")
    bob.git("commit", "-q", "-am", "bob")
    journal = bob.journal.read_bytes()

    pulled = bob.git("pull", "--no-rebase", "origin", "main", check=False)
    assert pulled.returncode != 0
    assert "not merged: theirs' entry" in pulled.stderr and "secret" in pulled.stderr
    assert secret.secret not in pulled.stderr
    assert bob.journal.read_bytes() == journal  # nothing journaled
    refused = bob.memory("list")
    assert refused.returncode == 2 and "unresolved git merge conflict markers" in refused.stderr


def test_a_pushed_store_over_the_size_bound_is_refused_and_ours_left_as_git_gave_it(
    team: tuple[Clone, Clone],
) -> None:
    """A side over 64 MiB is never read whole, not even to copy it between conflict
    markers: git reports the conflict and the file stays what git put in %A (ours)."""
    alice, bob = team
    huge = alice.store.read_bytes() + b" " * (65 * 2**20)
    alice.store.write_bytes(huge)
    alice.git("commit", "-q", "-am", "a store padded past the bound")
    alice.git("push", "-q", "origin", "HEAD:main")
    del huge
    bob.add("Bob: meanwhile")
    bob.git("commit", "-q", "-am", "bob")
    ours = bob.store.read_bytes()
    journal = bob.journal.read_bytes()

    pulled = bob.git("pull", "--no-rebase", "origin", "main", check=False)
    assert pulled.returncode != 0 and "CONFLICT" in pulled.stdout
    assert "not merged: theirs' version is larger than 64 MiB" in pulled.stderr
    assert "left it as git gave it" in pulled.stderr
    assert bob.store.read_bytes() == ours  # byte for byte what git put in %A
    assert bob.journal.read_bytes() == journal  # nothing journaled
    assert "UU .invincat/memory_project.json" in bob.git("status", "--porcelain").stdout


def test_without_the_driver_a_conflict_is_refused_as_before(tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    alice = Clone(tmp_path / "alice", tmp_path / "alice-env")
    bob = Clone(tmp_path / "bob", tmp_path / "bob-env")
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", "main", str(origin)],
        check=True,
        env=alice.env(),
        timeout=DEADLINE,
    )
    for clone in (alice, bob):
        subprocess.run(
            ["git", "clone", "-q", str(origin), str(clone.root)],
            check=True,
            capture_output=True,
            env=clone.env(),
            timeout=DEADLINE,
        )
        clone.git("config", "user.name", clone.root.name)
        clone.git("config", "user.email", f"{clone.root.name}@example.com")
    alice.share()  # Alice commits the attribute; Bob never defines the driver
    alice.add(SHARED)
    alice.git("add", ".gitattributes", ".invincat")
    alice.git("commit", "-q", "-m", "shared")
    alice.git("push", "-q", "origin", "HEAD:main")
    bob.git("pull", "-q", "origin", "main")
    alice.add("Alice: one")
    alice.git("commit", "-q", "-am", "a")
    alice.git("push", "-q", "origin", "HEAD:main")
    bob.add("Bob: two")
    bob.git("commit", "-q", "-am", "b")

    pulled = bob.git("pull", "--no-rebase", "origin", "main", check=False)
    assert pulled.returncode != 0 and "CONFLICT" in pulled.stdout
    assert "merge-driver" not in pulled.stderr
    refused = bob.memory("list")
    assert refused.returncode == 2
    assert "unresolved git merge conflict markers" in refused.stderr
    assert "git checkout --ours" in refused.stderr


def test_the_driver_merges_even_with_a_broken_config_toml(tmp_path: Path) -> None:
    """git runs the driver with the user's environment: an unrelated settings error must
    not turn every merge into a conflict."""
    clone = Clone(tmp_path / "repo", tmp_path / "env")
    (clone.root / ".git").mkdir(parents=True)
    clone.home.mkdir(parents=True)
    (clone.home / "config.toml").write_text("compaction_threshold = 7\n")
    base = {"version": 1, "scope": "project", "next_seq": 1, "items": []}
    item = {
        "id": "mem_p_000001",
        "scope": "project",
        "section": "Testing",
        "content": "one fact",
        "score": 50,
        "tier": "warm",
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00",
    }
    theirs = {**base, "next_seq": 2, "items": [item]}
    for name, doc in (("O", base), ("A", base), ("B", theirs)):
        (clone.root / name).write_text(json.dumps(doc))
    done = subprocess.run(
        [str(INVINCAT), "memory", "merge-driver", "O", "A", "B", ".invincat/memory_project.json"],
        cwd=clone.root,
        capture_output=True,
        text=True,
        env=clone.env(),
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert [i["id"] for i in json.loads((clone.root / "A").read_text())["items"]] == [
        "mem_p_000001"
    ]
    assert clone.memory("list").returncode == 2  # the other commands still report the config


@contextlib.contextmanager
def _unwritable(path: Path) -> Iterator[None]:
    """`path` and its folder made unwritable for this user: read-only modes, and for
    root, whom modes do not stop, the immutable attribute (skipped where unsupported)."""
    folder = path.parent
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None:
            pytest.skip("root needs chattr to make a file unwritable")
        made = subprocess.run([chattr, "+i", str(path)], capture_output=True, timeout=DEADLINE)
        if made.returncode != 0:
            pytest.skip(f"chattr +i is not supported here: {made.stderr!r}")
        try:
            yield
        finally:
            subprocess.run([chattr, "-i", str(path)], check=True, timeout=DEADLINE)
        return
    os.chmod(path, 0o444)
    os.chmod(folder, 0o555)
    try:
        yield
    finally:
        os.chmod(folder, 0o755)
        os.chmod(path, 0o644)


def test_a_result_git_cannot_get_is_not_journaled_as_a_merge(tmp_path: Path) -> None:
    """%A is written before the journal: when it cannot be written, no `merge` batch
    claims a merge that did not happen, and %A stays what git gave."""
    clone = Clone(tmp_path / "repo", tmp_path / "env")
    (clone.root / ".git").mkdir(parents=True)
    sides = tmp_path / "git-temp"
    sides.mkdir()
    item = {
        "id": "mem_p_000001",
        "scope": "project",
        "section": "Testing",
        "content": "the tests run with pytest -q",
        "score": 50,
        "tier": "warm",
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00",
    }
    base = {"version": 2, "scope": "project", "items": []}
    for name, doc in (("O", base), ("A", base), ("B", {**base, "items": [item]})):
        (sides / name).write_text(json.dumps(doc))
    ours = (sides / "A").read_bytes()
    argv = [str(INVINCAT), "memory", "merge-driver", *(str(sides / n) for n in "OAB")]
    with _unwritable(sides / "A"):
        done = subprocess.run(
            [*argv, ".invincat/memory_project.json"],
            cwd=clone.root,
            capture_output=True,
            text=True,
            env=clone.env(),
            timeout=DEADLINE,
        )
    assert done.returncode == 1, done.stderr
    assert clone.merges() == []
    assert (sides / "A").read_bytes() == ours
    assert "not merged: cannot write the result to" in done.stderr
