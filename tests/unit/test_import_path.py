"""import_path: what a process of ours removes from sys.path so that no file of its working
directory (the user's project) is importable. End to end: tests/protection/
test_repository_cannot_run_code.py; here, each kind of entry on its own."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from invincat_server.import_path import drop_directory, drop_working_directory, relative_entries


@pytest.fixture
def path(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    entries: list[str] = []
    monkeypatch.setattr(sys, "path", entries)
    return entries


def test_relative_entries_and_the_directory_itself_go_the_rest_stays(
    path: list[str], tmp_path: Path
) -> None:
    project, library = tmp_path / "project", tmp_path / "lib"
    project.mkdir()
    library.mkdir()
    (tmp_path / "link-to-project").symlink_to(project)
    path[:] = [
        "",
        ".",
        "src",
        str(project),
        str(project) + "/",
        str(tmp_path / "link-to-project"),  # the same directory through a symlink
        str(library),
        str(project / "sub"),  # not the directory itself: nothing imports "sub" from it
        "/no/such/dir",
        "/with\0nul",  # unusable, and harmless: left as it is
    ]
    drop_directory(str(project))
    assert path == [str(library), str(project / "sub"), "/no/such/dir", "/with\0nul"]


def test_a_directory_given_through_a_symlink_is_the_same_directory(
    path: list[str], tmp_path: Path
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    path[:] = [str(tmp_path / "real"), "/usr/lib/python3"]
    drop_directory(str(tmp_path / "alias"))
    assert path == ["/usr/lib/python3"]


def test_the_working_directory_goes(
    path: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path[:] = ["", str(tmp_path), "/usr/lib/python3"]
    drop_working_directory()
    assert path == ["/usr/lib/python3"]


def test_a_removed_working_directory_still_drops_relative_entries(
    path: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    path[:] = ["", "rel", "/usr/lib/python3"]
    drop_working_directory()
    assert path == ["/usr/lib/python3"]
    os.chdir(tmp_path)


def test_relative_pythonpath_entries_are_named() -> None:
    assert relative_entries(None) == [] and relative_entries("") == []
    assert relative_entries("/opt/lib:/usr/local/lib") == []
    assert relative_entries(":/opt/lib") == [""]
    assert relative_entries("/opt/lib:.:src:") == [".", "src", ""]
