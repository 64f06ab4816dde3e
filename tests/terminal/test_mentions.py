"""`@path` mentions through the real `invincat chat` process: the file reaches the model,
a missing one is reported to the user and to the model, e-mails are left alone."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat
from tests.terminal.planted import plant_unreadable


def test_a_mentioned_file_reaches_the_model_and_a_missing_one_is_reported(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 42\n")
    fake_openai.add_steps([{"content": "It returns 42."}])
    prompt = "what does @src/app.py return? also @docs/gone.md; mail me at me@example.com"
    result = run_invincat(["chat", prompt, "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr

    content = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert content.startswith(prompt + "\n\n<editor_context>")
    assert "File src/app.py (mentioned as @):\n```python\n     1\tdef main():" in content
    assert "@docs/gone.md was not attached: no such file in the workspace." in content
    assert "example.com" not in content.split("<editor_context>")[1]
    # The user sees it too, not only the model.
    shown = result.stdout + result.stderr
    assert "@docs/gone.md was not attached: no such file in the workspace." in shown


def test_a_mention_outside_the_workspace_or_of_a_memory_store_is_not_read(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    plant_unreadable(workspace)
    fake_openai.add_steps([{"content": "ok"}])
    prompt = "read @../outside-secret.txt and @.invincat/memory_project.json"
    result = run_invincat(["chat", prompt, "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    content = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert "TOP-SECRET-CONTENT" not in content and "MEMORY-PRIVATE" not in content
    assert "@../outside-secret.txt was not attached" in content
    assert "@.invincat/memory_project.json was not attached" in content
    errors = [e["message"] for e in result.of_type("error")]
    assert len(errors) == 2
    assert "outside the workspace" in errors[0] and "protected memory data" in errors[1]


def test_a_mention_too_long_for_a_file_name_costs_only_itself(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "app.py").write_text("A = 1\n")
    fake_openai.add_steps([{"content": "ok"}])
    prompt = "@" + "y" * 300 + ".py and @app.py"
    result = run_invincat(["chat", prompt, "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr
    content = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert "File app.py (mentioned as @)" in content
    [error] = [e["message"] for e in result.of_type("error") if "was not attached" in e["message"]]
    assert error == "@" + "y" * 80 + " was not attached: File name too long."
