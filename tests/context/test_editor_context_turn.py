"""Editor context and @mentions reach the model; history keeps what the user typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.editor_context import (
    Attachment,
    ContextError,
    EditorContext,
    LineRange,
)
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory


async def test_context_block_reaches_the_model_and_history_shows_the_prompt(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    (workspace / "app.py").write_text("a = 1\nb = foo\nc = 3\n")
    (workspace / "notes.md").write_text("# notes\n")
    fake_openai.add_steps([{"content": "foo is undefined."}])
    session = await make_session()
    context = EditorContext(
        selections=[Attachment(workspace / "app.py", LineRange(1, 0, 2, 0), "selection")]
    )
    turn = await session.start_turn(
        "why does this fail? see @notes.md and @gone/x.md", context=context
    )
    events = [event.to_json_dict() async for event in turn.events()]

    user = fake_openai.chat_requests()[-1]["messages"][-1]
    assert user["role"] == "user"
    assert user["content"].startswith("why does this fail? see @notes.md and @gone/x.md\n\n")
    assert "<editor_context>" in user["content"]
    assert "Selection in app.py, line 2:\n```python\n     2\tb = foo\n```" in user["content"]
    assert "File notes.md (mentioned as @):" in user["content"]
    assert "@gone/x.md was not attached: no such file in the workspace." in user["content"]
    # The user is told too, in the turn, right after turn_start.
    assert events[1] == {
        "type": "error",
        "message": "@gone/x.md was not attached: no such file in the workspace.",
    }

    history = await session.history(turn.thread_id)
    assert history[0] == {
        "role": "user",
        "content": "why does this fail? see @notes.md and @gone/x.md",
        "context": ["selection app.py, line 2", "mention notes.md", "not attached @gone/x.md"],
    }
    (thread,) = await session.threads()
    assert thread.title == "why does this fail? see @notes.md and @gone/x.md"


async def test_context_outside_the_workspace_is_refused_before_anything_runs(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("private\n")
    session = await make_session()
    with pytest.raises(ContextError, match="outside the workspace"):
        await session.start_turn(
            "explain", context=EditorContext(attachments=[Attachment(outside)])
        )
    assert fake_openai.chat_requests() == []
    assert await session.threads() == []


async def test_a_huge_file_is_named_not_read(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    (workspace / "dump.log").write_text("x" * 2_100_000)
    fake_openai.add_steps([{"content": "ok"}])
    session = await make_session()
    turn = await session.start_turn("look at @dump.log")
    [event async for event in turn.events()]
    content = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert "dump.log (mentioned as @): not included (dump.log is 2.1 MB, too big" in content
    assert "xxxx" not in content
