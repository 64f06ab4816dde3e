"""runtime/private_files.py: modes whatever the umask, no link followed below the anchor,
atomic replace, and nothing changed when a path is refused."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from invincat_server.runtime import private_files
from invincat_server.runtime.private_files import UnsafePathError


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_created_folders_and_files_are_private_under_umask_022(tmp_path: Path) -> None:
    target = tmp_path / "proj" / ".invincat" / "offload" / "t.md"
    (tmp_path / "proj").mkdir()
    private_files.atomic_write(target, b"x")
    assert mode(tmp_path / "proj" / ".invincat") == 0o700
    assert mode(target.parent) == 0o700
    assert mode(target) == 0o600
    private_files.create_new(target.parent / "backup", b"y")
    assert mode(target.parent / "backup") == 0o600
    fd = private_files.open_file(target.parent / "j", os.O_RDWR | os.O_CREAT | os.O_APPEND)
    os.close(fd)
    assert mode(target.parent / "j") == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["backup", "j", "t.md"]  # no temp


def test_a_looser_file_opened_for_writing_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "approvals.json"
    path.write_text("{}")
    path.chmod(0o644)
    os.close(private_files.open_file(path, os.O_RDWR))
    assert mode(path) == 0o600


def test_a_symlinked_data_dir_is_refused_for_reading_and_writing(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "memory_project.json").write_text("theirs")
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".invincat").symlink_to(outside)
    store = project / ".invincat" / "memory_project.json"
    for attempt in (
        lambda: private_files.read_bytes(store),
        lambda: private_files.atomic_write(store, b"ours"),
        lambda: private_files.create_new(project / ".invincat" / ".gitignore", b"*"),
        lambda: private_files.ensure_dir(project / ".invincat" / "offload"),
        lambda: private_files.open_file(store, os.O_RDWR | os.O_CREAT, root=project),
    ):
        with pytest.raises(UnsafePathError) as caught:
            attempt()
        assert str(project / ".invincat") in str(caught.value)
        assert "symbolic link" in str(caught.value)
    assert sorted(p.name for p in outside.iterdir()) == ["memory_project.json"]
    assert (outside / "memory_project.json").read_text() == "theirs"


def test_a_symlinked_file_is_refused_and_stays_a_link(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text("theirs")
    link = tmp_path / "proj" / ".invincat" / "memory_project.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(other)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        private_files.read_bytes(link)
    with pytest.raises(UnsafePathError, match="symbolic link"):
        private_files.atomic_write(link, b"ours")
    assert link.is_symlink() and other.read_text() == "theirs"
    assert [p.name for p in link.parent.iterdir()] == ["memory_project.json"]


def test_appending_to_a_hard_link_a_fifo_a_folder_in_place_of_a_file_are_refused(
    tmp_path: Path,
) -> None:
    data = tmp_path / "p" / ".invincat"
    data.mkdir(parents=True)
    other = tmp_path / "other.json"
    other.write_text("theirs")
    os.link(other, data / "hard.json")
    os.mkfifo(data / "fifo.json")
    (data / "dir.json").mkdir()
    with pytest.raises(UnsafePathError, match="hard links"):  # an append would reach it
        private_files.open_file(data / "hard.json", os.O_WRONLY | os.O_APPEND)
    assert private_files.read_bytes(data / "hard.json") == b"theirs"  # a read is harmless
    assert other.read_text() == "theirs"
    with pytest.raises(UnsafePathError, match="not a regular file"):
        private_files.read_bytes(data / "fifo.json")  # refused, not waited on
    with pytest.raises(UnsafePathError, match="not a regular file"):
        private_files.atomic_write(data / "dir.json", b"x")
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / ".invincat").write_text("a file where the folder goes")
    with pytest.raises(UnsafePathError, match="not a directory"):
        private_files.read_bytes(tmp_path / "q" / ".invincat" / "memory_project.json")


def test_the_anchor_itself_may_be_a_link(tmp_path: Path) -> None:
    """A home kept in a dotfiles repository (`~/.invincat -> dotfiles/invincat`) is the
    user's choice: with root=home it is followed, what is below it is not."""
    real = tmp_path / "dotfiles" / "invincat"
    real.mkdir(parents=True)
    home = tmp_path / ".invincat"
    home.symlink_to(real)
    private_files.atomic_write(home / "approvals.json", b"{}", root=home)
    assert (real / "approvals.json").read_bytes() == b"{}"
    assert private_files.read_bytes(home / "approvals.json", root=home) == b"{}"
    with pytest.raises(UnsafePathError):  # without the root, `.invincat` is project state
        private_files.read_bytes(home / "approvals.json")


def test_missing_files_read_as_none_and_missing_folders_are_not_created(tmp_path: Path) -> None:
    store = tmp_path / "proj" / ".invincat" / "memory_project.json"
    (tmp_path / "proj").mkdir()
    assert private_files.read_bytes(store) is None
    assert not private_files.exists(store)
    assert not (tmp_path / "proj" / ".invincat").exists()


def test_tighten_and_prepare_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    for name in ("threads.sqlite", "threads.sqlite-wal", "approvals.json"):
        (home / name).write_text("")
        (home / name).chmod(0o644)
    (home / "logs").mkdir()
    (home / "logs" / "mcp-x.log").write_text("")
    (home / "logs" / "mcp-x.log").chmod(0o644)
    (home / "logs").chmod(0o755)
    (home / "elsewhere").symlink_to(tmp_path)
    tmp_mode = mode(tmp_path)
    private_files.prepare_home(home)
    assert mode(home) == 0o700 and mode(home / "logs") == 0o700
    for name in ("threads.sqlite", "threads.sqlite-wal", "approvals.json", "logs/mcp-x.log"):
        assert mode(home / name) == 0o600, name
    assert mode(tmp_path) == tmp_mode  # a link is never chmod-ed through
    fresh = tmp_path / "fresh" / "home"
    private_files.prepare_home(fresh)
    assert mode(fresh) == 0o700
    private_files.prepare_sqlite(fresh / "threads.sqlite", root=fresh)
    assert mode(fresh / "threads.sqlite") == 0o600


def test_make_dirs_creates_every_missing_folder_0700(tmp_path: Path) -> None:
    private_files.make_dirs(tmp_path / "home" / "run")
    assert mode(tmp_path / "home") == 0o700 and mode(tmp_path / "home" / "run") == 0o700
    private_files.make_dirs(tmp_path / "home" / "run")  # existing: fine, unchanged
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "home" / "link").symlink_to(tmp_path / "elsewhere")
    private_files.make_dirs(tmp_path / "home" / "link" / "x")  # the user's existing link
    assert mode(tmp_path / "elsewhere" / "x") == 0o700
