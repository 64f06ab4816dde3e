"""The language server on PostgreSQL: an approval a killed `invincat chat` left waiting on
one machine is listed, and approved, by an editor on another machine (another
INVINCAT_HOME, the same database); its thread list and history come from the database."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import CLIENTS, start_client, stop_client
from tests.terminal.cli_process import LiveInvincat

pytest.importorskip("psycopg")
TIMEOUT = 90


async def test_an_editor_on_another_machine_lists_and_approves_what_the_cli_left(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    pg_url: str,
    workspace: Path,
    tmp_path: Path,
) -> None:
    env = {**invincat_env, "INVINCAT_DATABASE_URL": pg_url, "INVINCAT_WARM": "0"}
    write = {"name": "write_file", "arguments": {"path": "w.txt", "content": "W"}}
    fake_openai.add_steps([{"tool_calls": [write]}, {"content": "Written from the editor."}])
    live = LiveInvincat(["chat", "write w please", "--json", "--cwd", str(workspace)], env)
    asked = live.wait_for("approval_requested")
    live.kill()

    home = tmp_path / "editor-machine-home"
    home.mkdir()
    editor = await start_client({**env, "INVINCAT_HOME": str(home)}, workspace, CLIENTS[0])
    try:
        listed = await editor.request("invincat/threads/list", {}, timeout=TIMEOUT)
        [thread] = listed["threads"]
        assert thread["threadId"] == asked["thread_id"] and thread["title"] == "write w please"
        history = await editor.request(
            "invincat/threads/history", {"threadId": asked["thread_id"]}, timeout=TIMEOUT
        )
        assert "write w please" in str(history)
        pending = await editor.request("invincat/pendingApprovals", {}, timeout=TIMEOUT)
        assert [a["approval_id"] for a in pending["approvals"]] == [asked["approval_id"]]

        resolved = await editor.resolve(asked["approval_id"], "approve")
        assert resolved["resolved"] is True
        end = await editor.turn_end(resolved["turnId"], timeout=TIMEOUT)
        assert end["status"] == "completed"
        assert (workspace / "w.txt").read_text() == "W"
        assert (await editor.request("invincat/pendingApprovals", {}))["approvals"] == []
    finally:
        await stop_client(editor)
