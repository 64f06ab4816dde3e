"""`.invincat/` in a real git repository: transcripts, locks, journals and backups stay out
of `git add .`; the project memory store and the team's config stay committable."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.data_dir import GITIGNORE_TEXT
from invincat_server.runtime.memory import MemoryService
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

from .gitrepo import Repo, needs_git

pytestmark = needs_git


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """Overrides the shared fixture: a real git repository instead of an empty `.git`."""
    return Repo.init(tmp_path / "project", tmp_path / "unused").root


async def test_offload_memory_and_backups_leave_only_the_store_for_git(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    workspace: Path,
    invincat_home: Path,
) -> None:
    repo = Repo(workspace, invincat_home)
    fake_openai.add_steps([{"content": "One."}, {"content": "Two."}, {"content": "Three."}])
    session = await make_session()
    thread_id, _ = await run_turn(session, "first question")
    await run_turn(session, "second question", thread_id)
    await run_turn(session, "third question", thread_id)
    report = await session.offload(thread_id)
    transcript = Path(report["file"])
    assert transcript.is_file() and "first question" in transcript.read_text()

    repo.remember("Run ./scripts/test before pushing")
    # A hand-broken store is backed up and replaced by the next write (a read leaves it
    # alone): the backup must stay private too.
    repo.store.write_text("{ broken")
    assert repo.memory("list").returncode == 0
    repo.remember("Lint with ruff")
    (backup,) = repo.store.parent.glob("memory_project.corrupt-*.json")
    assert repo.journal.is_file() and (repo.store.parent / "memory_project.lock").is_file()

    assert repo.status() == {"?? .invincat/.gitignore", "?? .invincat/memory_project.json"}
    repo.git("add", "-A")
    committed = repo.git("diff", "--cached", "--name-only").stdout.split()
    assert committed == [".invincat/.gitignore", ".invincat/memory_project.json"]
    for private in (transcript, backup, repo.journal):
        assert repo.git("check-ignore", "-q", str(private), check=False).returncode == 0


def test_the_team_files_stay_committable(tmp_path: Path) -> None:
    repo = Repo.init(tmp_path / "project", tmp_path / "home")
    repo.remember("Releases are tagged vX.Y.Z")
    data = repo.store.parent
    (data / "config.toml").write_text("[memory]\nextraction = 'off'\n")
    (data / "mcp.json").write_text('{"mcpServers": {}}\n')
    (data / "skills" / "release").mkdir(parents=True)
    (data / "skills" / "release" / "SKILL.md").write_text("---\nname: release\n---\n")
    (data / "notes-of-mine.txt").write_text("not listed: private by default\n")
    assert repo.status() == {
        "?? .invincat/.gitignore",
        "?? .invincat/config.toml",
        "?? .invincat/mcp.json",
        "?? .invincat/memory_project.json",
        "?? .invincat/skills/release/SKILL.md",
    }


@pytest.mark.parametrize("existing", ["# mine\noffload/\n", ""])
def test_an_existing_gitignore_is_never_rewritten(dirs: tuple[Path, Path], existing: str) -> None:
    home, project = dirs
    gitignore = project / ".invincat" / ".gitignore"
    gitignore.parent.mkdir()
    gitignore.write_text(existing)
    service = MemoryService(home, project)
    service.apply("project", [{"op": "create", "scope": "project", "section": "S", "content": "x"}])
    assert gitignore.read_text() == existing


def test_a_gitignore_symlink_is_not_followed(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    home, project = dirs
    target = tmp_path / "elsewhere.txt"
    link = project / ".invincat" / ".gitignore"
    link.parent.mkdir()
    link.symlink_to(target)  # dangling: creating "it" would write outside the project
    MemoryService(home, project).apply(
        "project", [{"op": "create", "scope": "project", "section": "S", "content": "x"}]
    )
    assert not target.exists() and link.is_symlink()


def test_the_user_data_dir_gets_one_too(dirs: tuple[Path, Path]) -> None:
    # $INVINCAT_HOME may sit in a dotfiles repository (~/.invincat).
    home, project = dirs
    MemoryService(home, project).apply(
        "user", [{"op": "create", "scope": "user", "section": "Prefs", "content": "Terse"}]
    )
    assert (home / ".gitignore").read_text() == GITIGNORE_TEXT
    assert not (project / ".invincat").exists()  # a user write creates nothing in the project


async def test_a_project_at_home_keeps_threads_and_approvals_out_of_the_dotfiles_repo(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    invincat_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ~ is a dotfiles repository and $INVINCAT_HOME is ~/.invincat inside it; a chat in ~
    # writes threads.sqlite (whole conversations) and approval rules there.
    dotfiles = Repo.init(invincat_home.parent, invincat_home)
    fake_openai.add_steps([{"content": "Hi."}])
    session = await make_session()
    await run_turn(session, "hello")
    assert (invincat_home / "threads.sqlite").is_file()
    assert {line for line in dotfiles.status() if f" {invincat_home.name}/" in line} == {
        f"?? {invincat_home.name}/.gitignore"
    }
