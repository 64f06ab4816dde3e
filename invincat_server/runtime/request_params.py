"""Which optional request parameters a model server gets.

OpenAI's API and the servers that copy it differ in what they accept beyond the core of
chat completions: OpenAI's own endpoint wants `max_completion_tokens` (newer models refuse
`max_tokens`), while llama.cpp, Ollama, vLLM and most others know `max_tokens` (Ollama
ignores the newer name, so a cap sent under it would silently not apply).
"""

from __future__ import annotations

import re
from collections.abc import Set
from typing import Any
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


def name_token_limit(payload: dict[str, Any], param: str) -> dict[str, Any]:
    """`payload` with the cap (whichever name LangChain gave it) under `param`."""
    value = payload.pop(NEW_TOKEN_PARAM, None)
    value = payload.pop(OLD_TOKEN_PARAM, value)
    if value is not None:
        payload[param] = value
    return payload


# Parameters a request works without: a server that refuses one by name (HTTP 400) gets
# the request again without it, and never again in this session. The cap's two names are
# tried in turn before it is dropped.
DROPPABLE = ("tool_choice", "parallel_tool_calls", NEW_TOKEN_PARAM, OLD_TOKEN_PARAM)
# Words of a refusal, as opposed to a bad value ("max_tokens is too large" keeps the cap).
_REFUSAL = re.compile(
    r"unsupported|not supported|does not support|unknown|unrecognized|not permitted|"
    r"not allowed|extra (inputs|fields)|requires|unexpected|invalid (field|param)"
)
_TOOLS = re.compile(r"(?<![a-z_])tools(?![a-z_])|tool call|function call")


def adapt_payload(payload: dict[str, Any], token_param: str, refused: Set[str]) -> dict[str, Any]:
    """`payload` without what this server refused, its cap under the first name it took."""
    for name in ("tool_choice", "parallel_tool_calls"):
        if name in refused:
            payload.pop(name, None)
    other = OLD_TOKEN_PARAM if token_param == NEW_TOKEN_PARAM else NEW_TOKEN_PARAM
    names = [n for n in (token_param, other) if n not in refused]
    if names:
        return name_token_limit(payload, names[0])
    payload.pop(NEW_TOKEN_PARAM, None)
    payload.pop(OLD_TOKEN_PARAM, None)
    return payload


def _names(text: str, name: str) -> bool:
    return bool(re.search(rf"(?<![a-z_]){name}(?![a-z_])", text)) or name.replace("_", " ") in text


def refused_param(message: str, param: str | None, sent: Set[str]) -> str | None:
    """The droppable parameter (one of `sent`) a 400 says the server does not accept."""
    text = message.lower()
    if not _REFUSAL.search(text):
        return None
    candidates = [name for name in DROPPABLE if name in sent]
    if param in candidates:
        return param
    return next((name for name in candidates if _names(text, name)), None)


def refuses_tools(message: str) -> bool:
    """A 400 saying the model or server cannot take tools at all (Ollama: `… does not
    support tools`; llama.cpp without --jinja: `tools param requires --jinja flag`)."""
    text = message.lower()
    return bool(_TOOLS.search(text)) and bool(_REFUSAL.search(text))


def tools_advice(message: str) -> str:
    """What to do about a server that cannot take tools."""
    if "jinja" in message.lower():
        return "start llama-server with --jinja (its chat template then handles tools)"
    return (
        "choose a model that supports tool calling (Ollama: one tagged 'tools', such as "
        "qwen2.5-coder; llama.cpp: start llama-server with --jinja)"
    )
