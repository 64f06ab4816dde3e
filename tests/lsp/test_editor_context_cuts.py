"""`invincat/chat` context through the real language server (issue 23): a diagnostic's
text is redacted before it is cut, so a secret across the cut leaves no piece of itself
in what the model is sent."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient, file_uri
from tests.memory.credentials import credentials, filler, leaked, straddlers

BEFORE_CUT = 16  # characters of a secret before the cut: a piece the leak check finds


async def test_a_secret_across_a_diagnostics_cut_reaches_the_model_whole_redacted(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text("print('hello')\n")
    uri = lsp.open_document(path, "print('hello')\n")
    in_message, in_source = straddlers(credentials(), 5), straddlers(credentials(), 5)
    diagnostics = [
        {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
            # The message is cut at 500 characters, source and code together at 100.
            "message": filler(500 - BEFORE_CUT) + message.text + " trailing words",
            "severity": 2,
            "source": filler(100 - BEFORE_CUT) + source.text,
            "code": "X1",
        }
        for message, source in zip(in_message, in_source, strict=True)
    ]
    fake_openai.add_steps([{"content": "ok"}])
    context = {"activeDocument": {"uri": uri, "languageId": "python"}, "diagnostics": diagnostics}
    ref = await lsp.chat("what are these warnings?", context=context)
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"

    content = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert "Diagnostics:\n- app.py:1:1 warning [word word" in content
    assert leaked(content, in_message + in_source) == []
    # Each cut is marked; the placeholder, which would cross it, is left out whole.
    assert content.count(" …") >= len(diagnostics)


async def test_two_hundred_attachments_keep_the_block_within_its_cap(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    # Issue 23: 200 attachments of one large file gave a 55,083-character block (the
    # "not included" notes, titles and fences did not count against the 40,000).
    from invincat_server.runtime.editor_context import MAX_TOTAL_CHARS

    big = workspace / "big.py"
    big.write_text("".join(f"value_{n} = {n}  # {'z' * 60}\n" for n in range(3000)))
    fake_openai.add_steps([{"content": "ok"}])
    context = {"attachments": [{"uri": file_uri(big)}] * 200}
    ref = await lsp.chat("summarise these", context=context)
    assert (await lsp.turn_end(ref["turnId"]))["status"] == "completed"

    content = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    block = content[content.index("<editor_context>") :]
    assert len(block) <= MAX_TOTAL_CHARS, len(block)
    assert block.endswith("</editor_context>")
    # The model (and through it the user) is told what the limit left out.
    assert "the context limit (40,000 characters) is reached; not included (" in block
    assert "big.py" in block.split("is reached; not included (")[-1]
    # The user is told in the turn's events, and in the thread's history labels.
    told = [e["message"] for e in lsp.turn_events(ref["turnId"]) if e["type"] == "error"]
    assert any("editor context items not sent to the model" in m for m in told), told
    history = await lsp.request("invincat/threads/history", {"threadId": ref["threadId"]})
    labels = history["messages"][0]["context"]
    assert "attachment big.py (not included: the context limit)" in labels
