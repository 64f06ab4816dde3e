"""`invincat chat "PROMPT"`: one turn through the real CLI and the real ChatOpenAI client."""

from __future__ import annotations

from pathlib import Path

from invincat_server.runtime.events import parse_event
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

ANSWER = "Hello! The build uses make and the tests run with pytest."


def test_one_shot_answer_is_streamed_and_exits_zero(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": ANSWER, "chunk_size": 6}])
    result = run_invincat(["chat", "how do I build?", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    assert ANSWER in result.stdout
    sent = fake_openai.chat_requests()[-1]
    assert sent["stream"] is True
    assert sent["messages"][-1] == {"role": "user", "content": "how do I build?"}


def test_json_events_parse_and_end_with_turn_end(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": ANSWER, "chunk_size": 6}])
    result = run_invincat(["chat", "hi", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    events = result.events
    for event in events:
        parse_event(event)  # every line is a valid, typed event
    deltas = [e["text"] for e in events if e["type"] == "message_delta"]
    assert len(deltas) > 1 and "".join(deltas) == ANSWER
    assert any(e["type"] == "context_usage" and e["tokens"] > 0 for e in events)
    end = events[-1]
    assert end["type"] == "turn_end" and end["status"] == "completed"
    assert end["thread_id"] and end["turn_id"]


def test_thread_continues_with_resume_and_is_listed(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "first"}, {"content": "second"}])
    first = run_invincat(
        ["chat", "remember the word kiwi", "--json", "--cwd", str(workspace)], invincat_env
    )
    thread_id = first.events[-1]["thread_id"]
    second = run_invincat(
        ["chat", "what word?", "--resume", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert second.code == 0, second.stderr
    assert second.events[-1]["thread_id"] == thread_id
    contents = [m.get("content") for m in fake_openai.chat_requests()[-1]["messages"]]
    assert "remember the word kiwi" in contents and "first" in contents
    listed = run_invincat(["threads", "list"], invincat_env)
    assert thread_id in listed.stdout and "remember the word kiwi" in listed.stdout


def test_missing_configuration_is_one_line_and_exit_2(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    env = {k: v for k, v in invincat_env.items() if k != "OPENAI_API_KEY"}
    result = run_invincat(["chat", "hi", "--cwd", str(workspace)], env)
    assert result.code == 2
    assert result.stderr.strip().count("\n") == 0 and "OPENAI_API_KEY" in result.stderr
    env = {k: v for k, v in invincat_env.items() if k != "INVINCAT_MODEL"}
    result = run_invincat(["chat", "hi", "--cwd", str(workspace)], env)
    assert result.code == 2 and "INVINCAT_MODEL" in result.stderr


def test_unknown_thread_is_a_usage_error(invincat_env: dict[str, str], workspace: Path) -> None:
    result = run_invincat(
        ["chat", "hi", "--thread", "t_nope", "--cwd", str(workspace)], invincat_env
    )
    assert result.code == 2 and "unknown thread" in result.stderr
