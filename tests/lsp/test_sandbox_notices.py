"""The shell sandbox in an editor (`invincat/event`): every `execute` approval says how the
command will run, and when bwrap is missing the editor is told once and no "always"
choice is offered for the unconfined command."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import start_client, stop_client


def _run(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command}}]}


@pytest.mark.parametrize("bwrap", ["present", "missing"])
async def test_execute_approvals_name_the_sandbox(
    invincat_env: dict[str, str],
    fake_openai: FakeOpenAIServer,
    workspace: Path,
    editor: str,
    bwrap: str,
) -> None:
    if bwrap == "present" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    env = dict(invincat_env)
    if bwrap == "missing":
        env["INVINCAT_BWRAP"] = "/nonexistent/bwrap"
        env["INVINCAT_LANDLOCK"] = "off"  # and no Landlock fallback: nothing confines
    fake_openai.add_steps([_run("touch made.txt"), {"content": "done"}])
    client = await start_client(env, workspace, editor)
    try:
        ref = await client.chat("go")
        asked = (await client.wait_event("approval_requested"))["event"]
        assert (await client.resolve(asked["approval_id"], "approve"))["resolved"]
        assert (await client.turn_end(ref["turnId"]))["status"] == "completed"
        errors = [e["message"] for e in client.turn_events(ref["turnId"]) if e["type"] == "error"]
    finally:
        await stop_client(client)
    assert (workspace / "made.txt").exists()
    if bwrap == "present":
        assert asked["description"] == (
            "Run shell command: touch made.txt — in the sandbox (workspace-write, no network)"
        )
        assert asked["always_options"] and errors == []
    else:
        assert asked["description"].endswith(
            "WITHOUT a sandbox (bwrap not found; Landlock turned off (INVINCAT_LANDLOCK=off))"
        )
        assert asked["always_options"] == []
        [notice] = errors
        assert "configured but unavailable" in notice and "every command asks" in notice
