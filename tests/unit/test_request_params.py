"""Which name the output-token cap is sent under, per endpoint."""

from __future__ import annotations

import pytest

from invincat_server.runtime.request_params import name_token_limit, token_limit_param


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        (None, "max_completion_tokens"),
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("https://API.OpenAI.com/v1/", "max_completion_tokens"),
        ("http://127.0.0.1:8080/v1", "max_tokens"),
        ("http://localhost:11434/v1", "max_tokens"),
        ("https://api.openai.com.example.net/v1", "max_tokens"),
        ("https://proxy.example/openai.com/v1", "max_tokens"),
        ("not a url", "max_tokens"),
    ],
)
def test_openai_gets_the_new_name_and_every_other_server_the_old(
    base_url: str | None, expected: str
) -> None:
    assert token_limit_param(base_url) == expected


def test_the_cap_is_renamed_whichever_name_it_came_under() -> None:
    assert name_token_limit({"max_completion_tokens": 9, "a": 1}, "max_tokens") == {
        "a": 1,
        "max_tokens": 9,
    }
    assert name_token_limit({"max_tokens": 9}, "max_completion_tokens") == {
        "max_completion_tokens": 9
    }
    assert name_token_limit({"a": 1}, "max_tokens") == {"a": 1}
