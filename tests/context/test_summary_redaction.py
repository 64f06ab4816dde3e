"""Compaction summaries are checkpointed and outlive the turns they replace: whether the
model wrote them (and quoted a secret) or the fallback quoted the user's prompts, they
keep no secret (issue 13 §5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invincat_server.runtime.context.middleware import SUMMARY_SYSTEM_PROMPT
from invincat_server.runtime.context.window import SUMMARY_HEADER
from invincat_server.runtime.events import ContextUsage
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.memory.credentials import credentials, leaked
from tests.sessions import SessionFactory, run_turn

WINDOW = 6_000


def is_summary_request(request: dict) -> bool:
    return SUMMARY_SYSTEM_PROMPT[:40] in str(request["messages"][0])


@pytest.mark.parametrize("summary_model", ["quotes_secrets", "fails"])
async def test_an_auto_compaction_summary_keeps_no_secret(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    workspace: Path,
    summary_model: str,
) -> None:
    creds = [c for c in credentials() if len(c.text) < 120]
    (workspace / "data.txt").write_text("".join(f"record {i}: some value\n" for i in range(300)))
    if summary_model == "quotes_secrets":
        step = {"content": "SUMMARY: the user gave " + " ".join(c.text for c in creds)}
    else:  # the fallback summary quotes the user's earlier prompts
        step = {"fault": "http_400"}
    fake_openai.add_steps([{"match": {"system_contains": SUMMARY_SYSTEM_PROMPT[:40]}, **step}])
    for n in range(len(creds)):
        fake_openai.add_steps(
            [
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "data.txt"}}]},
                {"content": f"Answer {n}."},
            ]
        )
    session = await make_session(
        INVINCAT_CONTEXT_WINDOW=str(WINDOW),
        INVINCAT_COMPACTION_THRESHOLD="0.8",
        INVINCAT_MICRO_COMPACTION="false",
    )
    thread_id = None
    compacted = False
    for cred in creds:
        thread_id, events = await run_turn(session, f"use {cred.text} for the data", thread_id)
        compacted = any(isinstance(e, ContextUsage) and e.compacted for e in events)
        if compacted:
            break
    assert compacted, "auto-compaction never triggered"
    summary_requests = [r for r in fake_openai.chat_requests() if is_summary_request(r)]
    assert summary_requests
    # The summariser is sent the dropped turns redacted: what it never sees it cannot
    # quote, whole or cut, into the checkpointed summary.
    assert "[REDACTED:" in json.dumps(summary_requests)
    assert leaked(json.dumps(summary_requests), creds) == []
    after = [r for r in fake_openai.chat_requests() if not is_summary_request(r)][-1]
    summary = after["messages"][1]["content"]
    assert summary.startswith(SUMMARY_HEADER) and "[REDACTED:" in summary
    cut = [c for c in creds if c.secret not in json.dumps(after["messages"][2:])]
    assert cut, "nothing was compacted away"
    # Not even a 12-character piece of one (a secret cut before redaction leaves one).
    assert leaked(summary, cut) == []
