"""`:Invincat remote`: the buffer lists a thread whose run on a real `langgraph dev`
(Invincat's worker agent, the fake model) waits for an approval; `a` approves it after
asking and the file appears in the server's workspace."""

from __future__ import annotations

from pathlib import Path

from tests.deadlines import eventually
from tests.nvim.harness import RunNvim
from tests.remote.conftest import RemoteServer, configure_deployment
from tests.remote.conftest import remote_server as remote_server  # the module's server
from tests.remote.test_remote_cli import _start, _write_script


def test_the_remote_buffer_lists_and_approves_after_asking(
    nvim: RunNvim,
    remote_server: RemoteServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
) -> None:
    configure_deployment(invincat_home, remote_server.url)
    _write_script(remote_server, "nvim approve", "from-nvim.txt", "from neovim\n")
    started = _start(invincat_env, "nvim approve")

    result = nvim("remote", thread=started["thread_id"])

    assert result["filetype"] == "invincat-remote"
    assert f"lab  {started['thread_id']}" in result["listed"]
    assert "    write_file: Write from-nvim.txt" in result["listed"]
    assert [p["items"] for p in result["prompts"]] == [
        ["Reject", "Keep waiting"],
        ["Approve", "Keep waiting"],
    ]
    assert any("approved on lab" in n["message"] for n in result["notifications"])
    target = remote_server.workspace / "from-nvim.txt"
    assert eventually(target.exists), remote_server.log_text()[-3000:]
    assert target.read_text() == "from neovim\n"
