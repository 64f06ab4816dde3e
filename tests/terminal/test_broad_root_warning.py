"""Issue 13 §1: `invincat chat` started in $HOME (no project marker, so the root is $HOME)
warns once on stderr; --json keeps stdout to events."""

from __future__ import annotations

import json
from pathlib import Path

from invincat_server.runtime.policy.broad_root import broad_root_warning
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def test_home_root_warns_on_stderr_once(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "someone"
    home.mkdir()
    env = {**invincat_env, "HOME": str(home), "INVINCAT_HOME": str(home / ".invincat")}
    fake_openai.add_steps([{"content": "one"}, {"content": "two"}])
    first = run_invincat(["chat", "hi", "--json", "--cwd", str(home)], env)
    assert first.code == 0, first.stderr
    assert f"project root is your home directory ({home.resolve()})" in first.stderr
    assert all(json.loads(line) for line in first.stdout.splitlines())  # events only
    warned = json.loads((home / ".invincat" / "warned_roots.json").read_text())
    assert warned["roots"] == [str(home.resolve())]

    second = run_invincat(["chat", "hi", "--cwd", str(home)], env)
    assert second.code == 0, second.stderr
    assert "project root" not in second.stderr


def test_root_of_the_file_system_is_broad_and_projects_are_not(tmp_path: Path) -> None:
    home = tmp_path / "ih"
    message = broad_root_warning(Path("/"), home, user_home=tmp_path / "u")
    assert message is not None and "the whole file system (/)" in message
    assert broad_root_warning(Path("/"), home, user_home=tmp_path / "u") is None
    assert broad_root_warning(tmp_path / "proj", home, user_home=tmp_path / "u") is None
