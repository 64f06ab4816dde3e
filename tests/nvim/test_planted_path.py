"""A repository's own executable `invincat` never starts as the server, whatever PATH says.

Neovim starts the server in the project root, and its own lookup of a bare command name
(libuv's execvp) takes an empty or relative PATH entry (`.`, a trailing `:`) as that
directory. The plugin therefore resolves a bare name itself, on the absolute PATH entries
only (docs/security.md, "Repository content never runs as Invincat's code")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import INVINCAT, RunNvim


def plant(workspace: Path, marker: Path) -> None:
    """An executable `invincat` (and `bin/invincat`) in the repository that writes `marker`."""
    for place in (workspace / "invincat", workspace / "bin" / "invincat"):
        place.parent.mkdir(exist_ok=True)
        place.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{marker}'\nexit 3\n")
        place.chmod(0o755)
    (workspace / "main.py").write_text("print('hi')\n")


def hostile_path(*absolute: str) -> str:
    """`.`, a relative entry and an empty entry before the absolute ones, and a trailing `:`."""
    return ":".join([".", "bin", "", *absolute, ""])


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "planted-invincat-ran"


WHY = (
    "`invincat` is not on an absolute PATH entry"
    " (empty and relative entries such as `.` are not searched)"
)


def run_planted(nvim: RunNvim, marker: Path, path: str, *, server_on_path: bool) -> dict[str, Any]:
    """The scenario with the bare command `invincat` and `path` as PATH. The marker is
    checked even when the scenario failed: a planted program that ran is the finding."""
    try:
        return nvim(
            "planted_path",
            cmd=["invincat", "--stdio"],
            env={"PATH": path},
            server_on_path=server_on_path,
        )
    finally:
        assert not marker.exists(), f"the repository's invincat ran: {marker.read_text()}"


def test_the_plugin_starts_the_real_server_from_an_absolute_path_entry_not_the_planted_one(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path, marker: Path
) -> None:
    plant(workspace, marker)
    fake_openai.add_steps([{"content": "Hi from the real server."}])
    path = hostile_path(str(INVINCAT.parent), *os.environ["PATH"].split(":"))
    result = run_planted(nvim, marker, path, server_on_path=True)

    assert result["program"] == str(INVINCAT)
    assert "Hi from the real server." in result["chat"]
    assert f"OK server found: {INVINCAT}" in result["report"]
    assert "OK model configured: fake-model" in result["report"]
    assert result["enabled_initialized"]


def test_with_no_server_on_an_absolute_path_entry_the_user_is_told_and_nothing_planted_runs(
    nvim: RunNvim, workspace: Path, marker: Path
) -> None:
    plant(workspace, marker)
    # Only system directories: no `invincat` there (the venv's bin is left out).
    path = hostile_path("/usr/bin", "/bin")
    assert not any(Path(d, "invincat").exists() for d in ("/usr/bin", "/bin"))
    result = run_planted(nvim, marker, path, server_on_path=False)

    assert f"✗ cannot start the server: {WHY}" in result["chat"]
    errors = [n["message"] for n in result["notifications"] if n["level"] == 4]
    assert any(f"Invincat: cannot start the server: {WHY}" in m for m in errors), errors
    assert f"ERROR server not found: {WHY}" in result["report"]
    assert "pip install invincat-server" in result["report"]
    assert result["enabled_clients"] == 0


def test_the_lookup_skips_what_is_not_an_executable_file_and_bad_names_cost_only_themselves(
    nvim: RunNvim, tmp_path: Path
) -> None:
    real = str(INVINCAT.parent)
    folder_named = tmp_path / "folder-named"  # an `invincat` that is a directory
    (folder_named / "invincat").mkdir(parents=True)
    not_executable = tmp_path / "not-executable"
    not_executable.mkdir()
    (not_executable / "invincat").write_text("#!/bin/sh\n")
    linked_dir = tmp_path / "linked-bin"  # an absolute entry that is a symlink: the user's
    linked_dir.symlink_to(real)
    linked_program = tmp_path / "linked-program"
    linked_program.mkdir()
    (linked_program / "invincat").symlink_to(INVINCAT)
    cases: list[dict[str, Any]] = [
        {"program": "invincat", "path": f"{folder_named}:{not_executable}:{real}"},
        {"program": "invincat", "path": f".:{linked_dir}"},
        {"program": "invincat", "path": f"::{linked_program}"},
        # `cmd_env.PATH` is the PATH the server gets, so it is the one searched.
        {"program": "invincat", "path": real, "cmd_env": {"PATH": ".:bin:"}},
        {"program": "invincat", "path": ".", "cmd_env": {"PATH": real}},
        {"program": "invincat", "path": real, "cmd_env": {"PATH": 42}},  # wrong type: ignored
        {"program": "invincat", "path": f"~/bin:{real.removeprefix('/')}"},
        {"program": "invincat", "path": ""},
        {"program": "inv\0cat", "path": real},
        {"program": "x" * 100_000, "path": real},
        {"program": str(INVINCAT), "path": ""},  # a path is used as written
        {"program": "/nonexistent/invincat", "path": real},
    ]
    results = nvim("command_lookup", cases=cases)["results"]

    assert all(r["ok"] for r in results), results
    programs = [r["program"] for r in results]
    assert programs == [
        str(INVINCAT),
        f"{linked_dir}/invincat",
        f"{linked_program}/invincat",
        None,
        str(INVINCAT),
        str(INVINCAT),
        None,
        None,
        None,
        None,
        str(INVINCAT),
        None,
    ]
    problems = [r["problem"] for r in results]
    assert problems[3] == problems[6] == problems[7] == WHY
    assert problems[8] == "`cmd` holds a NUL byte"
    assert problems[9] is not None and "is not on an absolute PATH entry" in problems[9]
    assert problems[11] == "`/nonexistent/invincat` is not executable"
