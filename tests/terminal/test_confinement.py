"""File tools never reach outside the workspace, however the path is spelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


@pytest.mark.parametrize("spelling", ["dotdot", "absolute", "symlink"])
def test_write_outside_the_workspace_is_refused_with_a_clear_error(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    spelling: str,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    path = {
        "dotdot": "../outside/pwned.txt",
        "absolute": str(outside / "pwned.txt"),
        "symlink": "link/pwned.txt",
    }[spelling]
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x"}}]},
            {"content": "I could not write there."},
        ]
    )
    # --yes: even with everything auto-approved, confinement still holds.
    result = run_invincat(
        ["chat", "write", "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert result.code == 0, result.stderr
    [tool_result] = result.of_type("tool_result")
    assert tool_result["status"] == "error"
    assert "outside the workspace" in tool_result["content"]
    assert list(outside.iterdir()) == []
    tool_messages = [m for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert "outside the workspace" in tool_messages[0]["content"]


def test_refused_path_is_not_even_offered_for_approval(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "../x", "content": "x"}}]},
            {"content": "ok"},
        ]
    )
    result = run_invincat(["chat", "write", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    assert result.of_type("approval_requested") == []
    assert not (workspace.parent / "x").exists()
