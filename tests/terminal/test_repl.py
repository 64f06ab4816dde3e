"""The interactive REPL: several turns on one thread, slash commands."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def test_repl_runs_turns_on_one_thread_and_offloads(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "one"}, {"content": "two"}, {"content": "three"}])
    script = "first\nsecond\n/offload\n/help\n/bogus\nthird\n/exit\n"
    result = run_invincat(["chat", "--json", "--cwd", str(workspace)], invincat_env, input=script)
    assert result.code == 0, result.stderr
    ends = result.of_type("turn_end")
    assert [e["status"] for e in ends] == ["completed"] * 3
    assert len({e["thread_id"] for e in ends}) == 1
    assert "Offloaded 2 messages" in result.stderr
    assert "/offload" in result.stderr  # help text
    assert "Unknown command /bogus" in result.stderr
    last = fake_openai.chat_requests()[-1]["messages"]
    assert [m["content"] for m in last if m["role"] == "user"][-1] == "third"
    assert "first" not in [m["content"] for m in last if m["role"] == "user"]
    offloaded = next((workspace / ".invincat" / "offload").glob("*.md")).read_text()
    assert "first" in offloaded and "one" in offloaded and "second" not in offloaded
