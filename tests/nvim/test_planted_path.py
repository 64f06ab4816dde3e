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
