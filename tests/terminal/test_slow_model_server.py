"""A slow model server (a local one reading a long prompt before its first chunk) is
waited for as long as Invincat's one request timeout says, and no longer."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import Result, run_invincat


def _chat(env: dict[str, str], workspace: Path, timeout: str, **more: str) -> Result:
    env = {
        **env,
        **more,
        "INVINCAT_REQUEST_TIMEOUT": timeout,
        "INVINCAT_MAX_RETRIES": "0",
        "INVINCAT_MEMORY_EXTRACTION": "off",
    }
    return run_invincat(["chat", "hello", "--json", "--cwd", str(workspace)], env)


def test_a_first_chunk_later_than_the_request_timeout_fails_naming_the_setting(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # The head comes at once, the first chunk long after the 3 s timeout. Whichever
    # notices first (the stream's idle timeout or the HTTP read timeout, both the one
    # setting) ends the turn, naming that setting.
    fake_openai.add_steps([{"content": "Too late.", "first_chunk_delay": 30}])
    result = _chat(invincat_env, workspace, "3")
    assert result.code == 1, result.stdout + result.stderr
    # (The sandbox may add a notice of its own when bwrap is missing.)
    [error] = [e for e in result.of_type("error") if "model server" in e["message"]]
    assert "3s" in error["message"]
    assert "INVINCAT_REQUEST_TIMEOUT (request_timeout in config.toml)" in error["message"]
    assert result.events[-1] == {**result.events[-1], "type": "turn_end", "status": "failed"}
    assert "Too late." not in result.stdout
    assert "Traceback" not in result.stderr


def test_a_first_chunk_within_a_long_request_timeout_is_waited_for(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # langchain-openai ends a stream after LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S (120 s
    # unless set) without a chunk, whatever the request timeout: set to 2 s here so that
    # a 5 s wait shows the request timeout is the one that counts.
    fake_openai.add_steps([{"content": "Slow but whole.", "first_chunk_delay": 5}])
    result = _chat(invincat_env, workspace, "60", LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S="2")
    assert result.code == 0, result.stdout + result.stderr
    assert "Slow but whole." in "".join(e["text"] for e in result.of_type("message_delta"))
    assert not [e for e in result.of_type("error") if "model server" in e["message"]]
