"""`invincat chat --remote`, `invincat remote list|approve|cancel`: the real `invincat`
process against a real `langgraph dev` server running Invincat's worker agent."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from tests.deadlines import eventually
from tests.remote.conftest import RemoteServer, configure_deployment
from tests.terminal.cli_process import Result, run_invincat


def _write_script(server: RemoteServer, prompt: str, path: str, content: str) -> None:
    server.fake.add_steps(
        [
            {
                "match": {"last_user_contains": prompt, "has_tool_result": True},
                "content": f"{prompt}: done",
            },
            {
                "match": {"last_user_contains": prompt},
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": path, "content": content}}
                ],
            },
        ]
    )


def _start(env: dict[str, str], prompt: str, *extra: str) -> dict[str, Any]:
    result = run_invincat(["chat", "--remote", "lab", "--json", *extra, prompt], env)
    assert result.code == 0, result.stderr
    started = result.events[0]
    assert started["type"] == "remote_run_started"
    return started


def _pending(env: dict[str, str]) -> list[dict[str, Any]]:
    result = run_invincat(["remote", "list", "--json"], env)
    assert result.code == 0, result.stderr
    return list(json.loads(result.stdout)["pending"])


def _waiting(env: dict[str, str], thread_id: str) -> dict[str, Any] | None:
    return next((p for p in _pending(env) if p["thread_id"] == thread_id), None)


def test_remote_write_waits_for_approval_then_writes(
    remote_server: RemoteServer, invincat_env: dict[str, str], invincat_home: Path
) -> None:
    configure_deployment(invincat_home, remote_server.url)
    _write_script(remote_server, "approve me", "approved.txt", "from afar\n")
    waited = run_invincat(
        ["chat", "--remote", "lab", "--json", "--wait", "approve me"], invincat_env
    )
    assert waited.code == 0, waited.stderr
    started, ended = waited.events
    assert started["type"] == "remote_run_started"
    # --wait returns once the run stopped at the approval, naming what it waits on.
    assert ended["type"] == "remote_run_ended" and ended["pending"] == ["Write approved.txt"]
    item = _waiting(invincat_env, started["thread_id"])
    assert item is not None, remote_server.log_text()[-3000:]
    assert item["kind"] == "tool_approval"
    assert [(c["tool_name"], c["summary"]) for c in item["calls"]] == [
        ("write_file", "Write approved.txt")
    ]
    # The server runs Invincat's worker agent: its prompt names the server's workspace,
    # and it offers Invincat's tools.
    [request] = [
        r for r in remote_server.fake.chat_requests() if "approve me" in json.dumps(r["messages"])
    ][:1]
    assert str(remote_server.workspace) in request["messages"][0]["content"]
    offered = {tool["function"]["name"] for tool in request["tools"]}
    assert {"write_file", "edit_file", "execute", "read_file", "search_memory"} <= offered
    # Stopped at the approval: nothing written yet.
    assert not (remote_server.workspace / "approved.txt").exists()

    text = run_invincat(["remote", "list"], invincat_env)
    assert started["thread_id"] in text.stdout and "Write approved.txt" in text.stdout

    done = run_invincat(["remote", "approve", started["thread_id"], "--json"], invincat_env)
    assert done.code == 0, done.stderr
    assert done.events[0]["type"] == "remote_decided"
    assert done.events[0]["decision"] == "approve"
    target = remote_server.workspace / "approved.txt"
    assert eventually(target.exists), remote_server.log_text()[-3000:]
    assert eventually(lambda: _waiting(invincat_env, started["thread_id"]) is None)
    assert target.read_text() == "from afar\n"

    again = run_invincat(["remote", "approve", started["thread_id"]], invincat_env)
    assert again.code == 1
    assert "waits for no approval" in again.stderr


def test_remote_reject_writes_nothing(
    remote_server: RemoteServer, invincat_env: dict[str, str], invincat_home: Path
) -> None:
    configure_deployment(invincat_home, remote_server.url)
    _write_script(remote_server, "reject me", "rejected.txt", "never\n")
    started = _start(invincat_env, "reject me")
    assert eventually(lambda: _waiting(invincat_env, started["thread_id"]) is not None)
    done = run_invincat(
        ["remote", "approve", started["thread_id"], "--reject", "--message", "not now"],
        invincat_env,
    )
    assert done.code == 0, done.stderr
    assert "Rejected" in done.stdout
    assert eventually(lambda: _waiting(invincat_env, started["thread_id"]) is None)
    # The model got the rejection with the message and answered; still no file.
    assert eventually(
        lambda: any(
            "not now" in json.dumps(r["messages"]) for r in remote_server.fake.chat_requests()
        )
    )
    assert not (remote_server.workspace / "rejected.txt").exists()


def test_remote_cancel_stops_a_running_run(
    remote_server: RemoteServer, invincat_env: dict[str, str], invincat_home: Path
) -> None:
    configure_deployment(invincat_home, remote_server.url)
    remote_server.fake.add_steps([{"match": {"last_user_contains": "hang here"}, "fault": "hang"}])
    started = _start(invincat_env, "hang here")
    thread = started["thread_id"]
    assert eventually(
        lambda: any(
            "hang here" in json.dumps(r["messages"]) for r in remote_server.fake.chat_requests()
        )
    )
    done = run_invincat(["remote", "cancel", thread, "--json"], invincat_env)
    assert done.code == 0, done.stderr
    assert done.events[0]["type"] == "remote_cancelled"
    assert done.events[0]["cancelled"] == [started["run_id"]]
    nothing = run_invincat(["remote", "cancel", thread], invincat_env)
    assert nothing.code == 1 and "no run to cancel" in nothing.stderr


def test_unknown_deployment_bad_thread_and_unreachable_server(
    remote_server: RemoteServer, invincat_env: dict[str, str], invincat_home: Path
) -> None:
    configure_deployment(invincat_home, remote_server.url)
    unknown = run_invincat(["chat", "--remote", "nowhere", "hello"], invincat_env)
    assert unknown.code == 2
    assert "No remote deployment named 'nowhere' (configured: lab)" in unknown.stderr
    listed = run_invincat(["remote", "list", "nowhere"], invincat_env)
    assert listed.code == 2 and "nowhere" in listed.stderr

    for bad in (str(uuid.uuid4()), "not-a-uuid", "x" * 5000):
        result: Result = run_invincat(["remote", "approve", bad], invincat_env)
        assert result.code == 1, (bad[:20], result.stderr)
        assert "Traceback" not in result.stderr
    nul = run_invincat(["remote", "cancel", "a\x01b"], invincat_env)
    assert nul.code == 1 and "Traceback" not in nul.stderr

    configure_deployment(invincat_home, "http://127.0.0.1:9", name="lab")
    down = run_invincat(["remote", "list"], invincat_env)
    assert down.code == 1
    assert "Cannot reach the remote deployment lab at http://127.0.0.1:9" in down.stderr


def test_without_a_deployment_each_command_says_how_to_add_one(
    invincat_env: dict[str, str],
) -> None:
    for args in (["remote", "list"], ["remote", "approve", "t"], ["remote", "cancel", "t"]):
        result = run_invincat(args, invincat_env)
        assert result.code == 2, result.stderr
        assert "No remote deployment is configured" in result.stderr


def test_remote_refuses_local_only_flags(invincat_env: dict[str, str]) -> None:
    for flags in (["--yes"], ["--plan"], ["--thread", "t"]):
        result = run_invincat(["chat", "--remote", "lab", *flags, "hi"], invincat_env)
        assert result.code == 2 and "cannot be combined with --remote" in result.stderr
    assert run_invincat(["chat", "--wait", "hi"], invincat_env).code == 2
