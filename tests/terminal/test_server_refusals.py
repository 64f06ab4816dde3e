"""`invincat chat` against a server that refuses optional parameters or the tools: the
request goes again without what it named (said once on stderr), and a server that cannot
do tool calling ends the turn with which model, which server and what to do."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def test_the_memory_agents_forced_tool_choice_is_dropped_when_refused(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    memory = {"model": "memory-model"}
    fake_openai.add_steps(
        [
            {"match": memory, "fault": "http_400", "message": "tool_choice is not supported"},
            {"match": memory, "content": "{}"},
            {"content": "Hi."},
        ]
    )
    env = {
        **invincat_env,
        "INVINCAT_MEMORY_MODEL": "memory-model",
        "INVINCAT_MEMORY_EXTRACTION": "on",
    }
    result = run_invincat(["chat", "hello", "--json", "--cwd", str(workspace)], env)
    assert result.code == 0, result.stdout + result.stderr
    asked = [r for r in fake_openai.chat_requests() if r["model"] == "memory-model"]
    assert ["tool_choice" in r for r in asked] == [True, False]
    assert result.stderr.count("refused `tool_choice`") == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_a_model_without_tool_calling_ends_the_turn_saying_what_to_do(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    ollama = "registry.ollama.ai/library/gemma:2b does not support tools"
    fake_openai.add_steps([{"fault": "http_400", "message": ollama}])
    result = run_invincat(["chat", "hello", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 1, result.stdout + result.stderr
    [error] = [e for e in result.of_type("error") if "model" in e["message"]]
    assert error["message"].startswith(
        f"The model `fake-model` at {fake_openai.base_url} cannot call tools (HTTP 400: "
    )
    assert (
        ollama in error["message"]
        and "choose a model that supports tool calling" in (error["message"])
    )
    assert result.events[-1]["type"] == "turn_end" and result.events[-1]["status"] == "failed"
    assert len(fake_openai.chat_requests()) == 1
