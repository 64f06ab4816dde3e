"""A repository's own git config never makes Invincat's git reads start a program.

Invincat runs read-only git in the project: `git ls-files` for the files named in the
system prompt and for checkpoints, `git config` for who wrote a memory entry. A
`.git/config` arrives with a folder someone hands over (an archive, a shared disk) and can
set `core.fsmonitor` to a command git would run while reading the index. Through the real
`invincat chat` (which names the project's files and, after the turn, records who wrote
a memory entry) the planted command must never run.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def test_core_fsmonitor_of_the_repository_never_runs(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> None:
    marker = tmp_path / "fsmonitor-ran"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "calc.py").write_text("X = 1\n")
    subprocess.run(["git", "-C", str(workspace), "add", "calc.py"], check=True)
    hook = workspace / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    subprocess.run(["git", "-C", str(workspace), "config", "core.fsmonitor", str(hook)], check=True)
    # Git itself would run it: the plant is live, so its absence below means something.
    subprocess.run(["git", "-C", str(workspace), "status", "--short"], capture_output=True)
    assert marker.exists(), "git did not run the planted fsmonitor: the test proves nothing"
    marker.unlink()

    fake_openai.add_steps([{"content": "hi"}])
    result = run_invincat(["chat", "--yes", "hi", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    prompt = str(fake_openai.chat_requests()[0]["messages"][0]["content"])
    assert "- calc.py" in prompt  # git ls-files did run
    assert not marker.exists()
