"""`invincat memory share` with the real process and real git: one attribute line, the
driver defined in the clone's own config as this installation's absolute program, a clear
refusal outside a work tree, and no write through a planted link."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from invincat_server.runtime.memory.sharing import ATTRIBUTE_LINE, has_attribute_line
from tests.deadlines import DEADLINE

from .gitrepo import INVINCAT, needs_git

pytestmark = needs_git


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INVINCAT_", "GIT_"))}
    (tmp_path / "git-home").mkdir(exist_ok=True)
    (tmp_path / "invincat-home").mkdir(exist_ok=True)
    env.update(
        HOME=str(tmp_path / "git-home"),
        GIT_CONFIG_GLOBAL=str(tmp_path / "git-home" / "gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        INVINCAT_HOME=str(tmp_path / "invincat-home"),
    )
    return env


def _run(
    tmp_path: Path, cwd: Path, *args: str, umask: int = 0o022
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(INVINCAT), "memory", *args, "--cwd", str(cwd)],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=DEADLINE,
        umask=umask,
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    subprocess.run(
        ["git", "init", "-q", str(root)], check=True, env=_env(tmp_path), timeout=DEADLINE
    )
    return root


def _config(tmp_path: Path, root: Path, key: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "config", "--local", key],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=DEADLINE,
    )
    return done.stdout.strip()


def test_share_writes_one_attribute_line_and_the_local_driver(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".gitattributes").write_text("*.png binary")  # no final newline
    (root / "sub").mkdir()
    first = _run(tmp_path, root / "sub", "share")
    assert first.returncode == 0, first.stderr
    assert "added" in first.stdout and ".git/config (this clone only)" in first.stdout
    again = _run(tmp_path, root, "share", "--json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["gitattributes"] == {
        "path": str(root / ".gitattributes"),
        "line": ATTRIBUTE_LINE,
        "added": False,
    }
    assert (root / ".gitattributes").read_text() == f"*.png binary\n{ATTRIBUTE_LINE}\n"

    driver = _config(tmp_path, root, "merge.invincat-memory.driver")
    assert driver == report["config"]["merge.invincat-memory.driver"]
    program, *rest = shlex.split(driver)
    assert Path(program).is_absolute() and Path(program) == INVINCAT
    assert rest == ["memory", "merge-driver", "%O", "%A", "%B", "%P"]
    assert _config(tmp_path, root, "merge.invincat-memory.name")
    # Only the clone's own config: the global one the test set up stays untouched.
    assert not (tmp_path / "git-home" / "gitconfig").exists()


def test_share_keeps_the_mode_of_the_committed_gitattributes(tmp_path: Path) -> None:
    """`.gitattributes` is committed for the team: share must not make it private (0600),
    which git would record as a mode change for nobody's benefit."""
    root = _repo(tmp_path)
    attributes = root / ".gitattributes"
    attributes.write_text("*.png binary\n")
    os.chmod(attributes, 0o644)
    for _ in range(2):  # the second share finds the line and changes nothing
        done = _run(tmp_path, root, "share", umask=0o077)
        assert done.returncode == 0, done.stderr
        assert _mode(attributes) == 0o644
        assert attributes.read_text() == f"*.png binary\n{ATTRIBUTE_LINE}\n"

    # A new one is created as git creates a file: 0666 less the umask.
    attributes.unlink()
    done = _run(tmp_path, root, "share", umask=0o022)
    assert done.returncode == 0, done.stderr
    assert _mode(attributes) == 0o644
    assert attributes.read_text() == f"{ATTRIBUTE_LINE}\n"


def test_share_refuses_outside_a_git_work_tree(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    done = _run(tmp_path, plain, "share")
    assert done.returncode == 2
    assert "is not inside a git work tree" in done.stderr
    assert not (plain / ".gitattributes").exists()


def test_share_never_writes_through_a_planted_gitattributes_link(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    os.chmod(victim, 0o644)
    (root / ".gitattributes").symlink_to(victim)
    done = _run(tmp_path, root, "share")
    assert done.returncode == 2 and "is not a plain file" in done.stderr
    assert "symbolic link" in done.stderr
    assert victim.read_text() == "keep me\n" and _mode(victim) == 0o644
    assert (root / ".gitattributes").is_symlink()
    assert _config(tmp_path, root, "merge.invincat-memory.driver") == ""


def test_the_attribute_line_is_recognised_in_any_spelling() -> None:
    assert has_attribute_line(f"# team\n/{ATTRIBUTE_LINE}\n")
    assert has_attribute_line(".invincat/memory_project.json  -diff  merge=invincat-memory")
    assert not has_attribute_line(".invincat/memory_project.json merge=union")
    assert not has_attribute_line("# .invincat/memory_project.json merge=invincat-memory")


@pytest.mark.parametrize(
    "before", [[], ["--cwd", "."]], ids=["as-git-runs-it", "with-memory-options"]
)
def test_the_merge_driver_help_names_gits_placeholders(tmp_path: Path, before: list[str]) -> None:
    done = subprocess.run(
        [str(INVINCAT), "memory", *before, "merge-driver", "--help"],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    for placeholder in ("%O", "%A", "%B", "%P"):
        assert placeholder in done.stdout
