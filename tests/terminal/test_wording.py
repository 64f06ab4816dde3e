"""Counts are said in words a person would write: "1 thread", "(no output) [exit code: 0]",
never "1 thread(s)" or "(no output) (+1 lines)" (the real console script, the fake model)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from invincat_server.runtime.records import Records
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def test_a_silent_command_is_summed_up_as_no_output_and_its_exit_code(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": "true"}}]},
            {"content": "Ran it."},
        ]
    )
    done = run_invincat(
        ["chat", "run true", "--json", "--yes", "--cwd", str(workspace)], invincat_env
    )
    assert done.code == 0, done.stderr
    [result] = done.of_type("tool_result")
    assert result["summary"] == "(no output) [exit code: 0]"


def test_pruning_one_thread_says_one_thread(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    async def save() -> None:
        records = await Records.open(invincat_home / "threads.sqlite")
        try:
            await records.touch_thread("t_only", "the only one", str(workspace))
        finally:
            await records.close()

    asyncio.run(save())
    done = run_invincat(["threads", "prune", "--older-than", "0"], invincat_env, input="y\n")
    assert done.code == 0, done.stderr
    assert "1 thread last used more than 0 days ago:" in done.stdout
    assert "Delete this thread? This cannot be undone. [y/N]" in done.stdout
    assert "Deleted 1 thread; kept 0." in done.stdout
    assert "(s)" not in done.stdout
