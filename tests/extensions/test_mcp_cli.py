"""MCP servers through the real `invincat chat` process: tool listing, approval and
results, and the trust rule for project configs (more cases in-process: test_mcp_session)."""

from __future__ import annotations

import json
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.extensions.conftest import (
    HttpMcpServer,
    stdio_entry,
    tool_messages,
    tool_names,
    write_config,
)
from tests.terminal.cli_process import run_invincat


def _call(name: str, **args: object) -> dict:
    return {"name": name, "arguments": args}


def test_stdio_server_tool_is_listed_asked_and_its_result_reaches_the_model(
    fake_openai: FakeOpenAIServer, env: dict[str, str], invincat_home: Path, workspace
) -> None:
    write_config(invincat_home / "mcp.json", {"demo": stdio_entry()})
    fake_openai.add_steps(
        [
            {"tool_calls": [_call("demo__echo", text="hi", times=2)]},
            {"match": {"has_tool_result": True}, "content": "echoed"},
        ]
    )
    result = run_invincat(["chat", "--json", "--cwd", str(workspace), "echo hi"], env, input="y\n")
    assert result.code == 0, result.stderr
    first = fake_openai.chat_requests()[0]
    assert {"demo__echo", "demo__whoami", "demo__fail"} <= set(tool_names(first))
    schema = next(
        t["function"]["parameters"] for t in first["tools"] if t["function"]["name"] == "demo__echo"
    )
    assert schema["required"] == ["text"] and schema["properties"]["times"]["type"] == "integer"
    [asked] = result.of_type("approval_requested")
    assert asked["tool_name"] == "demo__echo" and asked["args"] == {"text": "hi", "times": 2}
    [tool_result] = result.of_type("tool_result")
    assert tool_result["status"] == "success" and tool_result["content"] == "hi hi"
    assert any(m["content"] == "hi hi" for m in tool_messages(fake_openai.chat_requests()))
    assert result.of_type("error") == []


def test_streamable_http_server_tool_is_asked_and_its_result_reaches_the_model(
    fake_openai: FakeOpenAIServer,
    env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
    http_mcp_server: HttpMcpServer,
) -> None:
    write_config(
        invincat_home / "mcp.json",
        {"web": {"url": http_mcp_server.url, "headers": {"X-Home": "${HOME}"}}},
    )
    fake_openai.add_steps(
        [
            {"tool_calls": [_call("web__echo", text="over http")]},
            {"match": {"has_tool_result": True}, "content": "done"},
        ]
    )
    result = run_invincat(["chat", "--json", "--cwd", str(workspace), "echo"], env, input="y\n")
    assert result.code == 0, result.stderr
    assert "web__echo" in tool_names(fake_openai.chat_requests()[0])
    [asked] = result.of_type("approval_requested")
    assert asked["tool_name"] == "web__echo"
    assert any(m["content"] == "over http" for m in tool_messages(fake_openai.chat_requests()))


def test_project_config_runs_only_when_trusted_and_again_asks_after_a_change(
    fake_openai: FakeOpenAIServer, env: dict[str, str], invincat_home: Path, workspace
) -> None:
    marker = workspace.parent / "project-server-ran"
    config = write_config(
        workspace / ".mcp.json", {"proj": stdio_entry(marker, name="proj", autoApprove=["*"])}
    )
    fake_openai.add_steps([{"content": "hello", "times": 10}])
    args = ["chat", "--json", "--cwd", str(workspace)]

    # Untrusted, even headless with --yes: not started, the user is told how to trust it.
    untrusted = run_invincat([*args, "--yes", "hi"], env)
    assert untrusted.code == 0, untrusted.stderr
    assert not marker.exists()
    [notice] = untrusted.of_type("error")
    assert "not trusted" in notice["message"] and "proj" in notice["message"]
    assert f"invincat chat --trust-project --cwd {workspace}" in notice["message"]
    assert not any(n.startswith("proj__") for n in tool_names(fake_openai.chat_requests()[0]))

    # --trust-project: it runs, and the trust is stored for the next sessions.
    seen = len(fake_openai.chat_requests())
    trusted = run_invincat([*args, "--trust-project", "hi"], env)
    assert trusted.code == 0, trusted.stderr
    assert len(marker.read_text().split()) == 1
    assert trusted.of_type("error") == []
    assert "proj__echo" in tool_names(fake_openai.chat_requests()[seen])
    stored = json.loads((invincat_home / "trusted_projects.json").read_text())
    assert str(workspace) in stored["projects"]

    again = run_invincat([*args, "hi"], env)
    assert again.code == 0 and again.of_type("error") == []
    assert len(marker.read_text().split()) == 2

    # Changing the file (here: adding a server) asks again; nothing of it starts.
    data = json.loads(config.read_text())
    data["mcpServers"]["extra"] = stdio_entry(marker, name="extra")
    config.write_text(json.dumps(data))
    changed = run_invincat([*args, "hi"], env)
    assert changed.code == 0, changed.stderr
    assert len(marker.read_text().split()) == 2
    [notice] = changed.of_type("error")
    assert "changed since you trusted it" in notice["message"]
