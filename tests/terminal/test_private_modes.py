"""Issue 23 item 3: other local users cannot read what Invincat keeps.

Under the usual umask 022 a home created 0755 and a threads.sqlite created 0644 let every
local user read whole conversations. Through the real `invincat` process (one-shot chat
and the REPL in a pty), with umask 022 set for it: `$INVINCAT_HOME` ends 0700 and every
file in it 0600, and a home an older version left open is tightened at start.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.extensions.conftest import stdio_entry, write_config
from tests.terminal.cli_process import run_invincat
from tests.terminal.pty_terminal import Terminal


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _write(path: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x\n"}}]}


def _modes(home: Path) -> dict[str, int]:
    """Every folder and file under `home` (itself included) with its permission bits."""
    found = {".": mode(home)}
    for path in home.rglob("*"):
        found[str(path.relative_to(home))] = mode(path)
    return found


def _chat_writing_a_rule(
    fake_openai: FakeOpenAIServer, env: dict[str, str], workspace: Path
) -> None:
    """A chat whose write is approved "always, workspace" (approvals.json), under umask 022."""
    fake_openai.add_steps([_write("a.txt"), {"content": "done"}])
    result = run_invincat(
        ["chat", "write a", "--json", "--cwd", str(workspace)], env, input="w\n", umask=0o022
    )
    assert result.code == 0, result.stderr
    assert (workspace / "a.txt").is_file()


def _assert_private(home: Path, expected: set[str]) -> None:
    modes = _modes(home)
    assert expected <= set(modes), sorted(modes)
    loose = {
        name: oct(bits)
        for name, bits in modes.items()
        if bits != (0o700 if (home / name).is_dir() else 0o600)
    }
    assert loose == {}


@pytest.fixture
def no_extraction(invincat_env: dict[str, str]) -> dict[str, str]:
    return {**invincat_env, "INVINCAT_MEMORY_EXTRACTION": "off"}


def test_a_new_home_and_everything_in_it_are_private_under_umask_022(
    fake_openai: FakeOpenAIServer,
    no_extraction: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> None:
    home = tmp_path / "fresh" / "home"  # does not exist: the chat creates it
    env = {**no_extraction, "INVINCAT_HOME": str(home)}
    _chat_writing_a_rule(fake_openai, env, workspace)
    _assert_private(home, {".", "threads.sqlite", "approvals.json", "approvals.json.lock"})


def test_a_home_an_older_version_left_open_is_tightened_at_start(
    fake_openai: FakeOpenAIServer,
    no_extraction: dict[str, str],
    workspace: Path,
    invincat_home: Path,
) -> None:
    write_config(invincat_home / "mcp.json", {"demo": stdio_entry()})
    _chat_writing_a_rule(fake_openai, no_extraction, workspace)
    expected = {".", "threads.sqlite", "approvals.json", "logs", "logs/mcp-demo.log"}
    _assert_private(invincat_home, expected)
    # What main left behind under umask 022: a 0755 home with 0644 files readable by all.
    for path in [invincat_home, *invincat_home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)

    fake_openai.add_steps([{"content": "again"}])
    result = run_invincat(
        ["chat", "hello", "--json", "--cwd", str(workspace)], no_extraction, umask=0o022
    )
    assert result.code == 0, result.stderr
    _assert_private(invincat_home, expected)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)  # inherited by the pty's child
    try:
        yield
    finally:
        os.umask(old)


def test_the_prompt_history_is_private_and_an_open_one_is_tightened(
    fake_openai: FakeOpenAIServer,
    no_extraction: dict[str, str],
    workspace: Path,
    invincat_home: Path,
    umask_022: None,
) -> None:
    from invincat_server.terminal.line_editor import history_path

    history = history_path(invincat_home, workspace)
    history.parent.mkdir(mode=0o755)
    history.write_text("\n# 2026-01-01 00:00:00\n+an old prompt\n")
    history.chmod(0o644)
    fake_openai.add_steps([{"content": "First answer."}])
    terminal = Terminal(["chat", "--cwd", str(workspace)], no_extraction)
    try:
        terminal.expect("› ")
        terminal.line("a prompt with a secret in it")
        terminal.expect("First answer.")
        terminal.expect("› ")
        terminal.ctrl_d()
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
    assert "a prompt with a secret" in history.read_text()
    assert mode(history) == 0o600
    assert mode(history.parent) == 0o700
    assert mode(invincat_home) == 0o700
