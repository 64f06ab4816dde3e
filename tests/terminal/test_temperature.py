"""`temperature` (`INVINCAT_TEMPERATURE`): sent with every model request when set, none
sent otherwise (the server's default), and a bad value is one line naming the setting."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

MEMORY = {"match": {"model": "memory-model"}, "content": "{}", "times": 5}


def _chat(env: dict[str, str], workspace: Path) -> int:
    env = {**env, "INVINCAT_MEMORY_MODEL": "memory-model", "INVINCAT_MEMORY_EXTRACTION": "on"}
    return run_invincat(["chat", "hello", "--json", "--cwd", str(workspace)], env).code


def test_unset_sends_none_and_set_reaches_the_main_and_the_memory_model(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
) -> None:
    fake_openai.add_steps([MEMORY, {"content": "Hi."}, {"content": "Again."}])
    assert _chat(invincat_env, workspace) == 0
    assert all("temperature" not in r for r in fake_openai.chat_requests())
    (invincat_home / "config.toml").write_text("temperature = 0.7\n", encoding="utf-8")
    before = len(fake_openai.chat_requests())
    assert _chat({**invincat_env, "INVINCAT_TEMPERATURE": "0.2"}, workspace) == 0
    later = fake_openai.chat_requests()[before:]
    assert {r["model"] for r in later} == {"fake-model", "memory-model"}
    assert all(r["temperature"] == 0.2 for r in later)  # the environment wins


def test_a_bad_temperature_is_one_line_naming_the_setting(
    invincat_env: dict[str, str], invincat_home: Path, workspace: Path
) -> None:
    config = invincat_home / "config.toml"
    cases = [("-0.1", ""), ("hot", ""), ("3", ""), ("nan", ""), ("", "temperature = [1]")]
    cases += [("", 'temperature = "0.2\\u0000"')]
    for env_value, toml in cases:
        config.write_text(toml + "\n", encoding="utf-8")
        env = {**invincat_env, "INVINCAT_TEMPERATURE": env_value}
        result = run_invincat(["chat", "hello", "--cwd", str(workspace)], env)
        assert result.code == 2, (env_value, toml, result.stderr)
        assert "temperature must be" in result.stderr
        assert "Traceback" not in result.stderr
