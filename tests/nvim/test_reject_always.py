"""'Reject always (this session)' in Neovim: the approval view's `X` asks like `r` (the
prompt names the rule, <Esc> keeps the call pending), then rejects the call and, for the
rest of the session, the next matching call without asking — nothing runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import RunNvim

LABEL = "Reject, and reject shell commands starting with `touch` for the rest of this session"


def _execute(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command}}]}


def test_reject_always_rejects_the_next_matching_call_without_asking(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            _execute("touch one.txt"),
            {"content": "Not touched."},
            _execute("touch two.txt"),
            {"content": "Still not touched."},
        ]
    )
    result = nvim("reject_always")

    label = LABEL
    assert result["deny_option"]["label"] == label
    assert result["view"][0] == " 1 approval waiting for your decision"
    assert any("X reject always (this session)…" in line for line in result["view"])
    # The first X was cancelled at its prompt: the call stayed pending, nothing decided.
    assert result["still_pending"] == 1
    prompts = [p["prompt"] for p in result["prompts"]]
    assert len(prompts) == 2 and all(p.startswith(label) for p in prompts)
    assert result["pending_after"] == 0
    chat = result["chat"]
    assert "rejected (always, this session)" in chat
    # The second call was answered by the session rule: no approval asked for it.
    assert "⚠ Run shell command: touch two.txt" not in chat
    assert "⊘ execute: The user rejected such execute calls for this session" in chat
    assert not (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
    assert len(fake_openai.chat_requests()) == 4


def test_the_all_choices_menu_offers_reject_always_behind_the_reject_prompt(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps([_execute("touch one.txt"), {"content": "Not touched."}])
    result = nvim("reject_always_menu")

    select, asked = result["prompts"]
    assert select["kind"] == "select" and LABEL in select["items"]
    assert asked["kind"] == "input" and asked["prompt"].startswith(LABEL)
    assert "rejected (always, this session)" in result["chat"]
    # The message typed at the prompt reached the model with the rejection.
    assert "not that" in json.dumps(fake_openai.chat_requests()[1]["messages"])
    assert not (workspace / "one.txt").exists()
