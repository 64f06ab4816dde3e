"""Two write_todos calls in one model response (Qwen2.5-Coder 1.5B does it) replace the
list twice, the later one winning, instead of failing the turn with LangGraph's
InvalidUpdateError."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

FIRST = [{"content": "Add the flag", "status": "pending"}]
SECOND = [{"content": "Add the flag", "status": "in_progress"}]


def test_two_write_todos_in_one_response_keep_the_later_list(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_todos", "arguments": {"todos": FIRST}},
                    {"name": "write_todos", "arguments": {"todos": SECOND}},
                ]
            },
            {"content": "Planned."},
        ]
    )
    result = run_invincat(
        ["chat", "plan it", "--json", "--yes", "--cwd", str(workspace)],
        invincat_env,
        timeout=120,
    )
    assert result.code == 0, result.stderr
    assert not result.of_type("error"), result.of_type("error")
    [end] = result.of_type("turn_end")
    assert end["status"] == "completed", end
    statuses = [e["status"] for e in result.of_type("tool_result") if e["name"] == "write_todos"]
    assert statuses == ["success", "success"], statuses
    assert "Planned." in "".join(e["text"] for e in result.of_type("message_delta"))
