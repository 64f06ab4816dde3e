"""Every fault of the model server ends the turn cleanly: an error event, exit 1, no hang,
no traceback, and the thread keeps working."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

FAULTS = {
    "http_500": ({"fault": "http_500", "times": 3}, "HTTP 500"),
    "http_429": ({"fault": "http_429", "retry_after": 0, "times": 3}, "rate-limiting"),
    "cut": ({"fault": "cut", "content": "This answer will be cut"}, "broke mid-response"),
    "hang": ({"fault": "hang", "times": 3}, "did not answer within"),
    # The server ends the stream cleanly but early: no finish_reason, no [DONE].
    "truncate": (
        {"fault": "truncate", "content": "The first half. The second half never comes."},
        "broke mid-response: the stream ended without a finish_reason",
    ),
    "truncate_tool_call": (
        {
            "fault": "truncate",
            "cut_after_chunks": 3,
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "a.txt", "content": "x" * 200}}
            ],
        },
        "broke mid-response",
    ),
    "malformed": (
        {"tool_calls": [{"name": "write_file", "arguments_raw": '{"path": "a.txt", "cont'}]},
        "malformed arguments for tool `write_file`",
    ),
    "array_args": (
        {"tool_calls": [{"name": "write_file", "arguments": ["a.txt", "x"]}]},
        "not a JSON object (got an array)",
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_ends_the_turn_with_a_clear_error_and_the_thread_stays_usable(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, fault: str
) -> None:
    step, expected = FAULTS[fault]
    fake_openai.add_steps([step, {"content": "Recovered."}])
    env = {**invincat_env, "INVINCAT_REQUEST_TIMEOUT": "1"}
    result = run_invincat(["chat", "hello", "--json", "--cwd", str(workspace)], env, timeout=60)
    assert result.code == 1, result.stdout + result.stderr
    [error] = result.of_type("error")
    assert expected in error["message"]
    assert "\n" not in error["message"].strip()
    assert result.events[-1]["type"] == "turn_end" and result.events[-1]["status"] == "failed"
    assert "Traceback" not in result.stderr
    assert not (workspace / "a.txt").exists()
    assert result.of_type("approval_requested") == []

    again = run_invincat(["chat", "again", "--resume", "--json", "--cwd", str(workspace)], env)
    assert again.code == 0, again.stdout + again.stderr
    assert "Recovered." in "".join(e["text"] for e in again.of_type("message_delta"))
    # Nothing of the broken answer was kept in the thread the model sees next.
    resent = fake_openai.chat_requests()[-1]["messages"]
    assert [m["role"] for m in resent if m["role"] != "system"] == ["user", "user"], resent


def test_a_single_429_is_retried_and_the_turn_succeeds(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"fault": "http_429", "retry_after": 0}, {"content": "After retry."}])
    result = run_invincat(["chat", "hello", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    assert len(fake_openai.chat_requests()) == 2
    assert result.of_type("error") == []
