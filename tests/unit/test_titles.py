"""Thread titles (runtime/titles.py): every title is redacted, then cut, and holds no
control character, whatever the prompt."""

from __future__ import annotations

import time

from invincat_server.runtime.titles import MAX_TITLE_CHARS, thread_title
from tests.memory.credentials import credentials, filler, leaked, straddlers


def test_a_secret_anywhere_in_the_first_80_characters_leaves_no_piece() -> None:
    for cred in straddlers(credentials(), 20):
        for at in (0, 40, 64, 79):
            title = thread_title(filler(at) + cred.text + " please")
            assert len(title) <= MAX_TITLE_CHARS
            assert leaked(title, [cred]) == [], (cred.provider, at, title)


def test_nul_bytes_escape_sequences_and_newlines_do_not_reach_the_title() -> None:
    title = thread_title("fix\x00 the\x1b[2J\x1b]0;owned\x07 build\r\nnow\x9b")
    assert title == "fix the [2J ]0;owned build now"


def test_a_huge_prompt_costs_only_its_start() -> None:
    [cred] = straddlers(credentials(), 1)
    prompt = "deploy with " + cred.text + " " + "word " * 2_000_000  # 10 MB
    started = time.perf_counter()
    title = thread_title(prompt)
    assert time.perf_counter() - started < 5  # a whole-text redaction takes far longer
    assert title.startswith("deploy with [REDACTED:") and leaked(title, [cred]) == []


def test_an_empty_or_blank_prompt_gives_an_empty_title() -> None:
    assert thread_title("") == "" and thread_title(" \n\t\x00 ") == ""
