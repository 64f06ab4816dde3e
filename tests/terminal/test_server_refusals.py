"""`invincat chat` against a server that refuses optional parameters or the tools: the
request goes again without what it named (said once on stderr), and a server that cannot
do tool calling ends the turn with which model, which server and what to do."""

from __future__ import annotations

import json
from pathlib import Path

from invincat_server.runtime.memory.service import MemoryService
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.memory_agent.test_extraction import create
from tests.terminal.cli_process import run_invincat


def test_the_memory_agents_forced_tool_choice_is_dropped_when_refused(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    memory = {"model": "memory-model"}
    fake_openai.add_steps(
        [
            {"match": memory, "fault": "http_400", "message": "tool_choice is not supported"},
            {"match": memory, "content": '{"operations": []}'},
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


def test_the_memory_agents_schema_constrained_retry_goes_without_it_when_refused(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
) -> None:
    memory = {"model": "memory-model"}
    operation = create("Makefiles are indented with tabs", "Formatting")
    fake_openai.add_steps(
        [
            {"content": "Noted."},
            {"match": memory, "content": "I will remember that Makefiles use tabs."},
            {"match": memory, "fault": "http_400", "message": "response_format is not supported"},
            {"match": memory, "content": json.dumps({"operations": [operation]})},
        ]
    )
    env = {
        **invincat_env,
        "INVINCAT_MEMORY_MODEL": "memory-model",
        "INVINCAT_MEMORY_EXTRACTION": "on",
    }
    prompt = "remember: Makefiles are indented with tabs"
    result = run_invincat(["chat", prompt, "--json", "--cwd", str(workspace)], env)
    assert result.code == 0, result.stdout + result.stderr
    asked = [r for r in fake_openai.chat_requests() if r["model"] == "memory-model"]
    # Through the tool first; asked again for schema-fitting JSON; refused, sent without.
    assert ["tools" in r for r in asked] == [True, False, False]
    assert ["response_format" in r for r in asked] == [False, True, False]
    assert asked[1]["response_format"]["type"] == "json_schema"
    assert result.stderr.count("refused `response_format`") == 1, result.stderr
    [entry] = MemoryService(invincat_home, workspace).list()
    assert entry.content == "Makefiles are indented with tabs"
