"""Which optional request parameters a model server gets.

OpenAI's API and the servers that copy it differ in what they accept beyond the core of
chat completions: OpenAI's own endpoint wants `max_completion_tokens` (newer models refuse
`max_tokens`), while llama.cpp, Ollama, vLLM and most others know `max_tokens` (Ollama
ignores the newer name, so a cap sent under it would silently not apply).
"""

from __future__ import annotations

from urllib.parse import urlsplit

NEW_TOKEN_PARAM = "max_completion_tokens"
OLD_TOKEN_PARAM = "max_tokens"


def token_limit_param(base_url: str | None) -> str:
    """The name under which the output-token cap is sent to this endpoint."""
    if not base_url:
        return NEW_TOKEN_PARAM  # the SDK's default endpoint: OpenAI's
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "openai.com" or host.endswith(".openai.com"):
        return NEW_TOKEN_PARAM
    return OLD_TOKEN_PARAM


def name_token_limit(payload: dict[str, object], param: str) -> dict[str, object]:
    """`payload` with the cap (whichever name LangChain gave it) under `param`."""
    value = payload.pop(NEW_TOKEN_PARAM, None)
    value = payload.pop(OLD_TOKEN_PARAM, value)
    if value is not None:
        payload[param] = value
    return payload
