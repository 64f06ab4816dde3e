"""The tools the model is offered, through the real `invincat chat`: the tools that do the
work first (small models reach for the first tools listed), `write_todos` and `ask_user`
after them, and no `ask_user` where nobody can answer (`--yes`)."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat


def offered(fake: FakeOpenAIServer) -> list[str]:
    return [t["function"]["name"] for t in fake.chat_requests()[0]["tools"]]


def test_work_tools_come_first_and_a_headless_turn_is_not_offered_ask_user(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "hi"}])
    result = run_invincat(["chat", "--yes", "hi", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    names = offered(fake_openai)
    assert names[:3] == ["read_file", "write_file", "edit_file"]
    assert names[-1] == "write_todos" and "ask_user" not in names


def test_an_interactive_turn_is_offered_ask_user_last(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "hi"}])
    result = run_invincat(["chat", "hi", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    assert offered(fake_openai)[-2:] == ["write_todos", "ask_user"]


def test_the_main_agent_is_told_memory_keeps_what_it_is_asked_to_remember_only_when_it_does(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    def system_prompt(extraction: str) -> str:
        fake_openai.add_steps([{"content": "hi", "match": {"model": "fake-model"}}])
        fake_openai.add_steps([{"content": "{}", "match": {"model": "memory-model"}}])
        env = {
            **invincat_env,
            "INVINCAT_MEMORY_EXTRACTION": extraction,
            "INVINCAT_MEMORY_MODEL": "memory-model",
        }
        before = len(fake_openai.chat_requests())
        result = run_invincat(["chat", "hi", "--cwd", str(workspace)], env)
        assert result.code == 0, result.stderr
        [main] = [r for r in fake_openai.chat_requests()[before:] if r["model"] == "fake-model"]
        return str(main["messages"][0]["content"])

    assert "do not write it to a file" in system_prompt("on")
    assert "## Memory" not in system_prompt("off")


def test_the_system_prompt_names_the_projects_files_but_not_its_memory_store(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "calc.py").write_text("X = 1\n")
    store = workspace / ".invincat" / "memory"
    store.mkdir(parents=True)
    (store / "project.json").write_text("{}")
    fake_openai.add_steps([{"content": "hi"}])
    result = run_invincat(["chat", "--yes", "hi", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    prompt = str(fake_openai.chat_requests()[0]["messages"][0]["content"])
    assert "## Project files" in prompt and "- calc.py" in prompt
    assert "project.json" not in prompt
