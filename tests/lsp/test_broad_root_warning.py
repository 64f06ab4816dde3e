"""Issue 13 §1: an editor opened on $HOME (no project marker) shows a one-time warning
through window/showMessage (VS Code and Neovim display it natively)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.lsp.client import start_client, stop_client, wait_until


async def test_home_as_project_root_warns_once(
    invincat_env: dict[str, str], tmp_path: Path, editor: str
) -> None:
    home = tmp_path / "someone"
    home.mkdir()
    env = {**invincat_env, "HOME": str(home), "INVINCAT_HOME": str(home / ".invincat")}

    def warnings(client: object) -> list[str]:
        return [
            m.message
            for m in client.messages  # type: ignore[attr-defined]
            if m.type == types.MessageType.Warning and "project root" in m.message
        ]

    first = await start_client(env, home, editor)
    try:
        [shown] = await wait_until(lambda: warnings(first), 60, "the broad-root warning")
        assert f"your home directory ({home.resolve()})" in shown
    finally:
        await stop_client(first)

    second = await start_client(env, home, editor)
    try:

        async def opened() -> bool:
            status = await second.request("invincat/debug/status")
            return bool(status["sessionOpen"])

        # The session opens in the background after `initialized`; poll up to 60 s.
        deadline = asyncio.get_running_loop().time() + 60
        while not await opened():
            assert asyncio.get_running_loop().time() < deadline, "session never opened"
            await asyncio.sleep(0.1)
        assert warnings(second) == []
    finally:
        await stop_client(second)


async def test_a_conflicted_memory_store_is_named_when_the_project_opens(
    invincat_env: dict[str, str], workspace: Path, editor: str
) -> None:
    """The core Project's notices reach the editor: a store git left conflicted is named
    with its file at once, not only when a memory request fails."""
    store = workspace / ".invincat" / "memory_project.json"
    store.parent.mkdir()
    store.write_text('<<<<<<< HEAD\n{"entries": []}\n=======\n{"entries": []}\n>>>>>>> b\n')
    client = await start_client(invincat_env, workspace, editor)
    try:
        [shown] = await wait_until(
            lambda: [
                m.message
                for m in client.messages
                if m.type == types.MessageType.Warning and "merge conflict" in m.message
            ],
            60,
            "the conflicted-store notice",
        )
        assert str(store) in shown
    finally:
        await stop_client(client)
