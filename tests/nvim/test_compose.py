"""The compose buffer: a multi-line prompt sent with `:w` or <C-s>, `#buffer` references
attached as the buffer's uri, `@file` mentions completed and left for the server."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import RunNvim


def test_compose_sends_a_multi_line_prompt_with_buffer_references_and_file_mentions(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("from util import helper\nprint(helper())\n")
    (workspace / "util.py").write_text("def helper():\n    return 1\n")
    fake_openai.add_steps([{"content": "It calls helper."}, {"content": "They match."}])
    result = nvim("compose")

    opened = result["opened"]
    assert opened["filetype"] == "markdown" and opened["below_file"]
    assert ":w or <C-s> send" in opened["winbar"]

    app, util = result["app"], result["util"]
    first, second = result["sent"]
    # `#buffer` reads as the file's path and attaches its uri; `@util.py` was completed
    # and stays in the prompt for the server to resolve.
    assert first["prompt"] == "Explain app.py, and how it uses @util.py please.\nSecond line."
    assert first["context"]["attachments"] == [{"uri": app}]
    assert first["context"]["activeDocument"]["uri"] == app
    assert not result["after_first"]["compose_open"] and result["after_first"]["in_chat"]

    # A reference to a buffer that is not loaded: nothing sent, the text kept.
    assert result["sent_count_after_error"] == 1
    assert result["kept"] == ["See #buffer:missing.py"]
    errors = [n["message"] for n in result["notifications"] if n["level"] == 4]
    assert any("#buffer:missing.py is not a loaded file of the project" in m for m in errors)

    # Opened from the chat (`c`): the context is the file window's; <C-s> sent it.
    assert second["prompt"] == "Compare util.py with app.py"
    assert second["context"]["attachments"] == [{"uri": util}, {"uri": app}]
    assert second["context"]["activeDocument"]["uri"] == app
    assert "They match." in result["chat"]
