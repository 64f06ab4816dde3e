"""Files a prompt names without `@` ("fix the bug in calc.py"), through the real `invincat
chat` process: an existing workspace file reaches the model with the prompt, as a mention
would, while a name that is no such file (one still to be written, one outside the
workspace, a protected store, a link leading out) is ordinary text, read from nowhere."""

from __future__ import annotations

import os
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat
from tests.terminal.planted import plant_unreadable


def _attach_errors(result: object) -> list[str]:
    """The turn's error events about context (not, say, the sandbox's set-up note)."""
    events = result.of_type("error")  # type: ignore[attr-defined]
    return [e["message"] for e in events if "attach" in e["message"] or "context" in e["message"]]


def _sent(fake_openai: FakeOpenAIServer) -> str:
    content = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert isinstance(content, str)
    return content


def test_a_file_named_in_the_prompt_reaches_the_model_and_title_is_the_prompt(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "calc.py").write_text("def area(r):\n    return 3.14159 * r * r\n")
    (workspace / "test_calc.py").write_text("from calc import area\n")
    fake_openai.add_steps([{"content": "The area of a circle."}])
    prompt = "Read calc.py and `test_calc.py`, then write hello.txt. What does area compute?"
    result = run_invincat(["chat", prompt, "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    content = _sent(fake_openai)
    assert content.startswith(prompt + "\n\n<editor_context>")
    assert "File calc.py (named in the request):\n```python\n     1\tdef area(r):" in content
    assert "File test_calc.py (named in the request):" in content
    # A file still to be written is no file yet: nothing about it, no error.
    assert "hello.txt" not in content.split("<editor_context>")[1]
    assert _attach_errors(result) == []

    # The thread's title is what the user typed, not the attached text.
    listed = run_invincat(["threads", "list"], invincat_env)
    assert listed.code == 0, listed.stderr
    assert "Read calc.py" in listed.stdout and "def area" not in listed.stdout


def test_a_name_outside_the_workspace_protected_or_linked_out_is_not_read(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    outside, _ = plant_unreadable(workspace)
    os.symlink(outside, workspace / "notes.txt")
    fake_openai.add_steps([{"content": "ok"}])
    prompt = (
        f"look at ../outside-secret.txt, {outside}, .invincat/memory_project.json and notes.txt"
    )
    result = run_invincat(["chat", prompt, "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    content = _sent(fake_openai)
    assert content == prompt  # no block at all: nothing named could be attached
    assert "TOP-SECRET-CONTENT" not in content and "MEMORY-PRIVATE" not in content
    assert _attach_errors(result) == []


def test_named_files_are_capped_redacted_and_can_be_switched_off(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    key = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"
    names = [f"m{n}.py" for n in range(7)]
    for name in names:
        (workspace / name).write_text(f"KEY = '{key}'\n")
    (workspace / "big.py").write_text("x = 1\n" * 5000)
    fake_openai.add_steps([{"content": "ok"}, {"content": "ok"}])
    prompt = "compare big.py with " + " ".join(names)
    result = run_invincat(["chat", prompt, "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 0, result.stderr
    block = _sent(fake_openai).split("<editor_context>")[1]
    assert block.count("(named in the request)") == 5  # big.py and the first four
    assert "File big.py (named in the request)" in block and "more lines not shown]" in block
    assert key not in block and "File m4.py" not in block

    off = {**invincat_env, "INVINCAT_ATTACH_NAMED_FILES": "off"}
    result = run_invincat(["chat", prompt, "--json", "--cwd", str(workspace)], off)
    assert result.code == 0, result.stderr
    assert _sent(fake_openai) == prompt
