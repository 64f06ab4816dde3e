"""Every chat from Neovim carries the editor context (docs/protocol.md, `context`): the
file, cursor, visible lines, the command's range as the selection, and its diagnostics."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import RunNvim

# A multi-byte prefix on the diagnostic's line: positions must be in the client's encoding.
LINES = [
    "import os",
    "def f():",
    "    s = '🐈 café' + foo",
    "    return s",
    "print(f())",
]


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode())
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def test_a_visual_range_chat_sends_the_lines_cursor_view_and_diagnostics(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("\n".join(LINES) + "\n")
    fake_openai.add_steps([{"content": "It adds foo."}, {"content": "Again."}])
    result = nvim("range_chat", lines=LINES)

    uri, encoding = result["uri"], result["encoding"]
    assert uri == (workspace / "app.py").resolve().as_uri()
    first, second = result["sent"]
    assert first["prompt"] == "explain"
    context = first["context"]
    assert context["activeDocument"] == {"uri": uri, "languageId": "python"}
    # `:'<,'>` over lines 2-4: whole lines, the end at the start of line 5.
    assert context["selections"] == [
        {
            "uri": uri,
            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 4, "character": 0}},
        }
    ]
    # Leaving Visual mode for `:` puts the cursor at the start of the range.
    assert context["cursor"] == {"uri": uri, "position": {"line": 1, "character": 0}}
    last = _units(LINES[4], encoding)
    assert context["visibleRange"] == {
        "uri": uri,
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 4, "character": last}},
    }
    # Only the diagnostic inside the range; its columns in the negotiated encoding.
    start = _units(LINES[2][: LINES[2].index("foo")], encoding)
    assert context["diagnostics"] == [
        {
            "uri": uri,
            "range": {
                "start": {"line": 2, "character": start},
                "end": {"line": 2, "character": start + 3},
            },
            "message": '"foo" is not defined',
            "severity": 1,
            "source": "FakeLint",
            "code": "undefined-name",
        }
    ]
    # Without a range: the cursor's line, no selection, no diagnostic there.
    assert second["prompt"] == "again"
    assert second["threadId"].startswith("t_")  # the same thread, continued
    again = second["context"]
    assert again["cursor"] == {"uri": uri, "position": {"line": 0, "character": 0}}
    assert "selections" not in again and "diagnostics" not in again
    assert "It adds foo." in result["chat"] and "Again." in result["chat"]
