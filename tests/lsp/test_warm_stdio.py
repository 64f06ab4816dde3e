"""`invincat --stdio` and the warm server (docs/warm-server.md): the first editor window is
served by its own process and starts a warm server in the background without waiting for
it; the next windows are served by workers forked from it, with the agent stack already
imported. A worker is the same language server: its approvals are decided by the editor,
and it ends when the editor goes away, even without `shutdown`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import private_runtime_dir, warm_servers, warm_workers
from tests.lsp.client import start_client, stop_client, wait_until


@pytest.fixture
def runtime() -> Iterator[Path]:
    """This test's own XDG_RUNTIME_DIR."""
    with private_runtime_dir() as directory:
        yield directory


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_the_next_window_is_served_warm_and_ends_with_its_editor(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    editor: str,
    runtime: Path,
) -> None:
    env = {**invincat_env, "XDG_RUNTIME_DIR": str(runtime)}
    env.pop("INVINCAT_WARM", None)  # the default
    first = await start_client(env, workspace, editor)
    try:
        status = await first.request("invincat/debug/status")
        assert status["stackLoadedAtInitialize"] is False  # its own process, cold
    finally:
        await stop_client(first)
    assert warm_workers(runtime) == []
    await wait_until(
        lambda: warm_servers(runtime), what="the warm server started in the background"
    )

    target = workspace / "notes.txt"
    edit = {"path": "notes.txt", "content": "warm\n"}
    fake_openai.add_steps(
        [{"tool_calls": [{"name": "write_file", "arguments": edit}]}, {"content": "Wrote it."}]
    )
    # As vscode-languageclient launches it: it appends `--stdio` to the configured arguments.
    second = await start_client(env, workspace, editor, args=("--stdio", "--stdio"))
    try:
        [worker] = warm_workers(runtime)
        status = await second.request("invincat/debug/status")
        assert status["stackLoadedAtInitialize"] is True  # forked with the stack imported
        ref = await second.chat("write the notes")
        asked = (await second.wait_event("approval_requested"))["event"]
        assert not target.exists()  # nothing written before the editor's decision
        assert (await second.resolve(asked["approval_id"], "approve"))["resolved"] is True
        assert (await second.turn_end(ref["turnId"]))["status"] == "completed"
        assert target.read_text() == "warm\n"

        # The editor dies without shutdown or exit: its worker goes with it.
        assert second._server is not None and alive(worker)
        second._server.kill()
        await wait_until(lambda: not alive(worker), what="the worker ending with its editor")
    finally:
        await stop_client(second)
    assert os.path.exists(runtime / "invincat")
