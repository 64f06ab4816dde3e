"""A real git repository and the real `invincat memory` CLI, for the git-sharing tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

INVINCAT = Path(sys.executable).with_name("invincat")

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git executable")


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    # The developer's git configuration (hooks, signing, default branch) must not matter.
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.com",
    )
    return env


class Repo:
    def __init__(self, root: Path, home: Path) -> None:
        self.root, self.home = root, home
        self.store = root / ".invincat" / "memory_project.json"
        self.journal = root / ".invincat" / "memory_project.journal.jsonl"

    @classmethod
    def init(cls, root: Path, home: Path) -> Repo:
        root.mkdir(parents=True, exist_ok=True)
        home.mkdir(parents=True, exist_ok=True)
        repo = cls(root, home)
        repo.git("init", "-q", "-b", "main")
        (root / "README.md").write_text("project\n")
        repo.git("add", "README.md")
        repo.git("commit", "-q", "-m", "initial")
        return repo

    def clone(self, root: Path) -> Repo:
        """Another team member's clone (its own journal: the journal is not shared)."""
        self.git("clone", "-q", str(self.root), str(root))
        return Repo(root, self.home)

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", "-C", str(self.root), *args],
            capture_output=True,
            text=True,
            env=_git_env(),
            timeout=60,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
        return done

    def status(self) -> set[str]:
        """`git status --porcelain --untracked-files=all`, one entry per path."""
        out = self.git("status", "--porcelain", "--untracked-files=all").stdout
        return {line for line in out.splitlines() if line}

    def memory(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("INVINCAT_")}
        env["INVINCAT_HOME"] = str(self.home)
        return subprocess.run(
            [str(INVINCAT), "memory", *args, "--cwd", str(self.root)],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    def remember(self, content: str, section: str = "Conventions") -> str:
        """Create one project entry through governance; returns its id."""
        op = {"op": "create", "scope": "project", "section": section, "content": content}
        done = self.memory("apply", "--scope", "project", "-", stdin=json.dumps([op]))
        assert done.returncode == 0, done.stderr
        (applied,) = json.loads(done.stdout)["applied"]
        return str(applied["id"])

    def contents(self) -> list[str]:
        done = self.memory("list", "--json")
        assert done.returncode == 0, done.stderr
        return sorted(item["content"] for item in json.loads(done.stdout)["items"])
