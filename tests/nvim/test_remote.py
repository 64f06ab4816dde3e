"""`:Invincat remote`: the buffer lists a thread whose run on a real `langgraph dev`
(Invincat's worker agent, the fake model) waits for an approval; `a` approves it after
asking and the file appears in the server's workspace; `c` cancels a run after asking."""

from __future__ import annotations

from pathlib import Path

from tests.deadlines import eventually
from tests.nvim.harness import RunNvim
from tests.remote.conftest import RemoteServer, configure_deployment
from tests.remote.conftest import remote_server as remote_server  # the module's server
from tests.remote.test_remote_cli import _start, _write_script
from tests.terminal.cli_process import run_invincat


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


def test_the_remote_buffer_cancels_a_run_after_asking(
    nvim: RunNvim,
    remote_server: RemoteServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
) -> None:
    configure_deployment(invincat_home, remote_server.url)
    prompt = "nvim cancel"
    # Approved, the call writes its file, then the model hangs: the run goes on until cancelled.
    remote_server.fake.add_steps(
        [
            {"match": {"last_user_contains": prompt, "has_tool_result": True}, "fault": "hang"},
            {
                "match": {"last_user_contains": prompt},
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "cancel.txt", "content": "x\n"}}
                ],
            },
        ]
    )
    started = _start(invincat_env, prompt)
    thread = started["thread_id"]

    result = nvim("remote_cancel", thread=thread)

    assert "c cancel run" in result["header"]
    question = ["Cancel run", "Keep running"]
    assert [p["items"] for p in result["prompts"]] == [question, question, question]
    messages = [n["message"] for n in result["notifications"]]
    refusal = "no run to cancel (it waits for an approval: reject it instead)"
    assert any(refusal in m for m in messages)
    [cancelled] = [m for m in messages if m.startswith("Invincat: cancelled on lab: run ")]
    run_id = cancelled.removeprefix("Invincat: cancelled on lab: run ")
    assert run_id and run_id != started["run_id"]  # the run the approval resumed
    # Nothing is left to cancel: the core says so, as for `invincat remote cancel`.
    nothing = run_invincat(["remote", "cancel", thread], invincat_env)
    assert nothing.code == 1, remote_server.log_text()[-3000:]
    assert "no run to cancel" in nothing.stderr
