"""`tool_result` statuses over `--json`: every declined call is `rejected` (whoever declined
it), only failures are `error` (protocol.md, plan-mode.md)."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

PLAN = [{"content": "Change the port to 9000"}]


def _call(name: str, **args: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _plan_steps() -> list[dict]:
    return [_call("write_todos", todos=PLAN), _call("approve_plan", todos=PLAN)]


def _tool_messages(server: FakeOpenAIServer) -> list[dict]:
    return [m for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]


def test_a_plan_mode_refusal_of_write_file_is_rejected(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([_call("write_file", path="x.txt", content="x"), *_plan_steps()])
    # n + empty message: reject the plan, so the main agent never runs.
    result = run_invincat(
        ["chat", "--plan", "do it", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="n\n\n",
        timeout=120,
    )
    assert result.code == 0, result.stderr
    [refused] = [e for e in result.of_type("tool_result") if e["name"] == "write_file"]
    assert refused["status"] == "rejected", refused
    assert "not available in plan mode" in refused["content"]
    assert not (workspace / "x.txt").exists()
    # The model is still told it was an error it must not repeat.
    assert any("not available in plan mode" in m["content"] for m in _tool_messages(fake_openai))


def test_a_rejected_web_fetch_of_the_planner_is_rejected(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([_call("web_fetch", url="https://example.invalid/spec"), *_plan_steps()])
    # n + message: reject the fetch; n + empty message: reject the plan.
    result = run_invincat(
        ["chat", "--plan", "plan the port change", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="n\nno network please\nn\n\n",
        timeout=120,
    )
    assert result.code == 0, result.stderr
    asked = result.of_type("approval_requested")
    first = asked[0]
    assert (first["kind"], first["tool_name"], first["agent"]) == ("tool", "web_fetch", "planner")
    [fetch] = [e for e in result.of_type("tool_result") if e["name"] == "web_fetch"]
    assert fetch["status"] == "rejected", fetch
    assert "The user rejected this web_fetch call" in fetch["content"]
    assert "no network please" in fetch["content"]


def test_a_tool_failure_is_an_error_not_a_rejection(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([_call("read_file", path="missing.txt"), {"content": "No such file."}])
    result = run_invincat(
        ["chat", "read missing.txt", "--json", "--cwd", str(workspace)], invincat_env, timeout=120
    )
    assert result.code == 0, result.stderr
    [failed] = result.of_type("tool_result")
    assert failed["status"] == "error", failed
    assert "File not found: missing.txt" in failed["content"]


def test_a_command_the_memory_guard_refuses_is_rejected(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [_call("execute", command="cat .invincat/memory_project.json"), {"content": "ok"}]
    )
    # --yes approves the command: the guard refuses it anyway, and that is a refusal.
    result = run_invincat(
        ["chat", "show memory", "--yes", "--json", "--cwd", str(workspace)],
        invincat_env,
        timeout=120,
    )
    assert result.code == 0, result.stderr
    [refused] = result.of_type("tool_result")
    assert refused["status"] == "rejected", refused
    assert refused["content"].startswith("Refused") and "Nothing was run." in refused["content"]


def test_a_file_tool_the_path_protection_refuses_is_rejected(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            _call("write_file", path=".invincat/memory_project.json", content="{}"),
            _call("read_file", path=".invincat/memory_project.json"),
            {"content": "ok"},
        ]
    )
    result = run_invincat(
        ["chat", "rewrite memory", "--yes", "--json", "--cwd", str(workspace)],
        invincat_env,
        timeout=120,
    )
    assert result.code == 0, result.stderr
    results = result.of_type("tool_result")
    assert [(r["name"], r["status"]) for r in results] == [
        ("write_file", "rejected"),
        ("read_file", "rejected"),
    ], results
    assert not (workspace / ".invincat" / "memory_project.json").exists()
