"""Redact first, then cut (issue 23): the cut helpers never leave a piece of a secret,
never split a placeholder, and stay cheap on a huge line."""

from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage

from invincat_server.runtime.context.micro import micro_compact
from invincat_server.runtime.memory.redaction import (
    cut_redacted,
    cut_whole_tokens,
    keep_end,
    redact_and_cut,
)
from tests.memory.credentials import credentials, filler, leaked, straddlers


def test_a_secret_across_the_cut_is_redacted_whole_not_halved() -> None:
    for cred in straddlers(credentials(), 20):
        text = filler(184) + cred.text + " the rest"
        cut = redact_and_cut(text, 200)
        assert len(cut) <= 200 and cut.endswith("…")
        assert leaked(cut, [cred]) == [], (cred.provider, cut)
        # The placeholder is either whole or left out, never cut.
        assert "[REDACTED:" not in cut or "]" in cut.split("[REDACTED:")[-1]


def test_a_cut_never_splits_a_placeholder() -> None:
    text = "x " * 95 + "[REDACTED:stripe_key] tail"
    assert cut_redacted(text, 200) == "x " * 95 + "…"
    assert keep_end("head [REDACTED:stripe_key] tail", 20) == " tail"


def test_a_huge_line_is_redacted_only_as_far_as_the_cut_needs() -> None:
    [cred] = straddlers(credentials(), 1)
    line = filler(100) + cred.text + " " + "word " * 400_000  # 2 MB
    cut = redact_and_cut(line, 200)
    assert len(cut) <= 200 and leaked(cut, [cred]) == []


def test_unredacted_text_is_cut_between_tokens_only() -> None:
    for cred in straddlers(credentials(), 10):
        text = filler(190) + cred.text
        cut = cut_whole_tokens(text, 200)
        assert cut == filler(190) and leaked(cut, [cred]) == []


def test_micro_compaction_heads_never_hold_half_a_secret() -> None:
    creds = straddlers(credentials(), 5)
    output = "\n".join(filler(190) + c.text for c in creds) + "\n" + "line\n" * 400
    messages: list = []
    for n in range(6):
        messages.append(
            AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": "a"}, "id": f"c{n}"}])
        )
        messages.append(ToolMessage(output, tool_call_id=f"c{n}", name="read_file"))
    compacted = micro_compact(messages)
    head = compacted[1].content
    assert isinstance(head, str) and head.startswith("[compacted tool output]")
    assert leaked(head, creds) == []


def test_a_huge_value_without_whitespace_costs_a_bounded_window() -> None:
    # A 5 MB diagnostic message or tool argument with no space must not be redacted
    # whole for a 500-character cut (20 of them would hang the prompt).
    import time

    [cred] = straddlers(credentials(), 1)
    text = filler(490) + cred.text + "z" * 5_000_000
    started = time.perf_counter()
    cut = redact_and_cut(text, 500)
    assert time.perf_counter() - started < 2
    assert len(cut) <= 500 and leaked(cut, [cred]) == []
