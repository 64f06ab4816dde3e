"""Every model request carries the output-token cap (`max_output_tokens`), under the name
the server knows, so a small model that loops stops instead of filling its context."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

MEMORY = {"match": {"model": "memory-model"}, "content": "{}", "times": 5}


def _chat(env: dict[str, str], workspace: Path) -> int:
    env = {**env, "INVINCAT_MEMORY_MODEL": "memory-model", "INVINCAT_MEMORY_EXTRACTION": "on"}
    result = run_invincat(["chat", "hello", "--json", "--cwd", str(workspace)], env)
    return result.code


def test_the_default_cap_is_sent_as_max_tokens_to_the_main_and_the_memory_model(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([MEMORY, {"content": "Hi."}])
    assert _chat(invincat_env, workspace) == 0
    requests = fake_openai.chat_requests()
    assert {r["model"] for r in requests} == {"fake-model", "memory-model"}
    for request in requests:
        # A server other than OpenAI's: the name llama.cpp, Ollama and vLLM all know.
        assert request["max_tokens"] == 4096
        assert "max_completion_tokens" not in request


def test_the_cap_comes_from_config_toml_and_the_environment_wins(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
) -> None:
    (invincat_home / "config.toml").write_text("max_output_tokens = 123\n", encoding="utf-8")
    fake_openai.add_steps([MEMORY, {"content": "Hi."}, {"content": "Again."}])
    assert _chat(invincat_env, workspace) == 0
    assert fake_openai.chat_requests()[0]["max_tokens"] == 123
    assert _chat({**invincat_env, "INVINCAT_MAX_OUTPUT_TOKENS": "0"}, workspace) == 0
    last = fake_openai.chat_requests()[-1]
    assert "max_tokens" not in last and "max_completion_tokens" not in last


def test_a_bad_cap_is_one_line_naming_the_setting(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    config = invincat_home / "config.toml"
    cases = [("-1", ""), ("many", ""), ("2000000", ""), ("", 'max_output_tokens = "12\\u0000"')]
    cases += [("", "max_output_tokens = true"), ("", "max_output_tokens = [1]")]
    for env_value, toml in cases:
        config.write_text(toml + "\n", encoding="utf-8")
        env = {**invincat_env, "INVINCAT_MAX_OUTPUT_TOKENS": env_value}
        result = run_invincat(["chat", "hello", "--cwd", str(workspace)], env)
        assert result.code == 2, (env_value, toml, result.stderr)
        assert "max_output_tokens must be" in result.stderr
        assert "Traceback" not in result.stderr
