"""Issue 23: `execute` commands do not inherit Invincat's own credentials or variables
whose names say they are secrets, so an approved `env` (or a build script it starts)
cannot read the model API key; only the user, not a repository, keeps one by name.

Each test performs the attack through the real `invincat chat` process and the scripted
fake model: the command is `env`, and the secrets must appear neither in the tool result
nor in the next request the model received.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.extensions.conftest import stdio_entry, write_config
from tests.terminal.cli_process import Result, run_invincat

API_KEY = "sk-envscrub-main-key-91c2"
FOO_TOKEN = "foo-token-value-5e7d"
MY_SECRET = "my-secret-value-a04b"
LOWER_PASSWORD = "lower-password-value-33f0"
HARMLESS = "harmless-value-c81e"
SECRETS = (API_KEY, FOO_TOKEN, MY_SECRET, LOWER_PASSWORD)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    return folder


@pytest.fixture
def env(invincat_env: dict[str, str]) -> dict[str, str]:
    return {
        **invincat_env,
        "OPENAI_API_KEY": API_KEY,
        "FOO_TOKEN": FOO_TOKEN,
        "MY_SECRET": MY_SECRET,
        "db_password": LOWER_PASSWORD,
        "HARMLESS_SETTING": HARMLESS,
    }


def _env_then_done() -> list[dict[str, Any]]:
    call = {"name": "execute", "arguments": {"command": "env"}}
    return [{"tool_calls": [call]}, {"content": "done"}]


def _chat(project: Path, env: dict[str, str]) -> Result:
    result = run_invincat(["chat", "go", "--json", "--yes", "--cwd", str(project)], env)
    assert result.code == 0, result.stderr
    return result


def _tool_result(result: Result) -> str:
    [content] = [str(r["content"]) for r in result.of_type("tool_result")]
    assert "[exit code: 0]" in content, content
    return content


def _sent_to_model(fake_openai: FakeOpenAIServer) -> str:
    """What the request after the tool call carried back to the model."""
    return str(fake_openai.chat_requests()[-1]["messages"])


def _errors(result: Result) -> str:
    return " ".join(str(e.get("message", "")) for e in result.of_type("error"))


# A one-shot chat runs in a warm worker by default, which takes the client's environment;
# INVINCAT_WARM=0 runs it in its own process: both must filter.
@pytest.mark.parametrize("warm", ["1", "0"])
def test_env_shows_no_api_key_and_no_secret_named_variable(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path, warm: str
) -> None:
    fake_openai.add_steps(_env_then_done())
    result = _chat(project, {**env, "INVINCAT_WARM": warm})
    text = _tool_result(result)
    assert f"HARMLESS_SETTING={HARMLESS}" in text, text  # the command did see the env
    sent = _sent_to_model(fake_openai)
    assert HARMLESS in sent
    for secret in SECRETS:
        assert secret not in text, (secret, text)
        assert secret not in sent, secret
        assert secret not in result.stdout, secret  # nor in any live `tool_output` event
    assert "OPENAI_API_KEY" not in text and "FOO_TOKEN" not in text


def test_the_user_config_keeps_a_named_variable_but_never_the_api_key(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    home = Path(env["INVINCAT_HOME"])
    (home / "config.toml").write_text(
        '[shell]\nkeep_env = ["FOO_TOKEN", "OPENAI_API_KEY", 7, "BAD\\u0000NAME"]\n'
    )
    fake_openai.add_steps(_env_then_done())
    result = _chat(project, env)
    text = _tool_result(result)
    assert f"FOO_TOKEN={FOO_TOKEN}" in text, text
    assert FOO_TOKEN in _sent_to_model(fake_openai)
    for secret in (API_KEY, MY_SECRET, LOWER_PASSWORD):
        assert secret not in text, (secret, text)
    # Each bad item is ignored on its own, and said once.
    notices = _errors(result)
    assert "OPENAI_API_KEY is Invincat's own credential" in notices, notices
    assert "7 is not a variable name" in notices, notices
    assert notices.count("keep_env") == 3, notices


def test_the_environment_variable_keeps_named_variables(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps(_env_then_done())
    result = _chat(project, {**env, "INVINCAT_SHELL_KEEP_ENV": "FOO_TOKEN, MY_SECRET"})
    text = _tool_result(result)
    assert FOO_TOKEN in text and MY_SECRET in text, text
    assert API_KEY not in text and LOWER_PASSWORD not in text


def test_a_repository_cannot_keep_variables_for_its_commands(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    (project / ".invincat").mkdir()
    (project / ".invincat" / "config.toml").write_text(
        '[shell]\nkeep_env = ["FOO_TOKEN", "MY_SECRET", "OPENAI_API_KEY"]\n'
    )
    fake_openai.add_steps(_env_then_done())
    result = _chat(project, env)
    text = _tool_result(result)
    for secret in SECRETS:
        assert secret not in text, (secret, text)
        assert secret not in _sent_to_model(fake_openai), secret
    notices = _errors(result)
    assert notices.count("keep_env in the project's") == 1, notices
    assert "INVINCAT_SHELL_KEEP_ENV" in notices, notices

    # Trusting the project changes nothing: keep_env is the user's alone.
    fake_openai.add_steps(_env_then_done())
    trusted = run_invincat(
        ["chat", "go", "--json", "--yes", "--trust-project", "--cwd", str(project)], env
    )
    assert trusted.code == 0, trusted.stderr
    assert FOO_TOKEN not in _tool_result(trusted)


def test_mcp_stdio_servers_keep_their_documented_environment(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    # Not the shell's filter: an MCP server gets the SDK's few variables plus its config's
    # `env`, secret-named or not (the user wrote it there for that server).
    home = Path(env["INVINCAT_HOME"])
    entry = stdio_entry(env={"SERVICE_TOKEN": FOO_TOKEN})
    write_config(home / "mcp.json", {"demo": entry})
    calls = [
        {"name": "demo__env_value", "arguments": {"name": "SERVICE_TOKEN"}},
        {"name": "demo__env_value", "arguments": {"name": "OPENAI_API_KEY"}},
    ]
    fake_openai.add_steps([{"tool_calls": calls}, {"content": "done"}])
    result = _chat(project, env)
    # The two calls run side by side: their results may come back in either order.
    contents = sorted(str(r["content"]) for r in result.of_type("tool_result"))
    assert contents == sorted([FOO_TOKEN, "(unset)"]), contents
