"""An over-long prompt is refused in the terminal with the language server's sentence (the
core's limit, runtime/project/limits.py), costs only that prompt, and never reaches the
model."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

TOO_LONG = 1_000_001


def test_an_over_long_repl_prompt_is_refused_and_the_next_one_runs(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "short answer"}])
    script = "x" * TOO_LONG + "\nhello\n/exit\n"
    result = run_invincat(["chat", "--json", "--cwd", str(workspace)], invincat_env, input=script)
    assert result.code == 0, result.stderr[-2000:]
    # The same words as the language server's -32602 (tests/lsp/test_bad_input.py).
    assert "The prompt is 1,000,001 characters; the limit is 1,000,000." in result.stderr
    assert "Save the text to a file in the workspace" in result.stderr
    assert [e["status"] for e in result.of_type("turn_end")] == ["completed"]
    sent = [m["content"] for r in fake_openai.chat_requests() for m in r["messages"]]
    assert "hello" in sent and not any(len(str(c)) >= TOO_LONG for c in sent)
