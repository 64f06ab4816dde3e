"""The chat buffer: a streamed answer, a continued thread, the thread picker, cancel."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import INVINCAT, RunNvim

ANSWER = "Hello from the fake model, streamed in small chunks."


def test_the_chat_buffer_shows_the_streamed_answer_and_the_thread_history(
    nvim: RunNvim, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.add_steps([{"content": ANSWER, "chunk_size": 5}, {"content": "second answer"}])
    result = nvim("chat")

    streamed = result["streamed"]
    assert "## You\nsay hello\n\n## Invincat\n" + ANSWER in streamed
    assert "— turn completed —" in streamed
    assert result["chat_is_split"] and result["chat_filetype"] == "invincat"
    assert "Invincat" in result["winbar"]
    # The second prompt went to the same thread (the model saw the first exchange).
    second = fake_openai.chat_requests()[1]["messages"]
    assert [m["content"] for m in second if m["role"] in ("user", "assistant")][-3:] == [
        "say hello",
        ANSWER,
        "and again",
    ]
    assert result["thread"].startswith("t_")
    # The picker listed the thread by its first prompt and reloaded its history.
    [picked] = [p for p in result["prompts"] if p["prompt"] == "Invincat thread"]
    assert picked["items"][0].startswith("say hello")
    history = result["history"]
    assert history.index("say hello") < history.index(ANSWER) < history.index("second answer")


def test_cancel_ends_the_turn_closes_its_approval_and_the_thread_goes_on(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    write = {"path": "notes.txt", "content": "notes\n"}
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "write_file", "arguments": write}]},
            {"content": "Still here after the cancel."},
        ]
    )
    result = nvim("cancel")

    chat = result["chat"]
    assert "Write file notes.txt — closed" in chat
    assert chat.index("— turn cancelled —") < chat.index("Still here after the cancel.")
    assert result["tabs_after_cancel"] == 1 and not result["view_open_after_cancel"]
    assert not (workspace / "notes.txt").exists()


def test_the_lsp_config_for_vim_lsp_enable_starts_the_client_the_commands_use(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "main.py").write_text("print('hi')\n")
    fake_openai.add_steps([{"content": "Hi from the enabled client."}])
    result = nvim("lsp_config", invincat=str(INVINCAT))

    assert result["clients"] == 1 and result["same_client"]
    assert result["root"] == str(workspace)
    assert "Hi from the enabled client." in result["chat"]
    assert "OK model configured: fake-model" in result["report"]
    assert "1 saved thread in" in result["report"]


def test_without_a_server_the_chat_says_what_to_do_and_bad_options_fall_back(
    nvim: RunNvim,
) -> None:
    result = nvim("no_server", cmd=["/nonexistent/bin/invincat", "--stdio"])

    assert (
        "✗ cannot start the server: `/nonexistent/bin/invincat` is not executable"
        in (result["chat"])
    )
    assert "pip install invincat-server" in result["chat"]
    assert result["status"] == ""  # not stuck "working"
    errors = [n["message"] for n in result["notifications"] if n["level"] == 4]
    assert any("cannot start the server" in m for m in errors)
    warned = [n["message"] for n in result["notifications"] if n["level"] == 3]
    assert warned == [
        "Invincat: invalid setup() options (cmd: expected a table, got string); using the defaults."
    ]
    assert result["cmd"] == ["invincat", "--stdio"]
