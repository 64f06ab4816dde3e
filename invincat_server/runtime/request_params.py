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
DROPPABLE = (
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    # The memory agent's schema-constrained retry (memory_agent/prompt.py): without it
    # the answer is free text, parsed as a bare {"operations": [...]} object.
    "response_format",
    NEW_TOKEN_PARAM,
    OLD_TOKEN_PARAM,
)

# What a refusal of a parameter says, as servers word it; a 400 is read as one only when
# such words stand next to the parameter's name (`_refuses_by_name`): a message that
# names `max_tokens` here and says "unknown" about something else there ("unknown model
# 'x'; max_tokens must be at most 4096") keeps the cap.
_BEFORE_NAME = (
    # "Unsupported parameter: 'max_tokens'" (OpenAI), "Unknown field tool_choice",
    # "Unrecognized request argument supplied: functions" (OpenAI), "unsupported tool_choice"
    r"(?:unsupported|unknown|unrecognized|unexpected|invalid|extra|disallowed|forbidden)"
    r"(?:\s+request)?(?:\s+(?:param(?:eter)?|field|argument|key|property|input|option)s?)?"
    r"(?:\s+supplied)?\s*[:=]?\s*['\"`(\[]*"
)
_AFTER_NAME = (
    # "'max_tokens' is not supported with this model" (OpenAI), '"auto" tool choice
    # requires --enable-auto-tool-choice' (vLLM), "parallel_tool_calls\n  Extra inputs are
    # not permitted" (a Pydantic server)
    r"['\"`)\]]*(?:\s+(?:param(?:eter)?|field|argument|option|key))?\s*:?\s*"
    r"(?:(?:is|are)\s+)?(?:not supported|unsupported|not permitted|not allowed|not recognized|"
    r"unrecognized|not implemented|requires|extra (?:inputs|fields) (?:are )?not permitted)"
)
# Any refusal at all, for a 400 whose `param` field names the parameter itself.
_REFUSAL = re.compile(
    r"unsupported|not supported|does not support|unknown|unrecognized|not permitted|"
    r"not allowed|extra (?:inputs|fields)|requires|unexpected|invalid (?:field|param)"
)
# A server that cannot take tools at all, in the words real servers use: Ollama "… does
# not support tools", llama.cpp without --jinja "tools param requires --jinja flag", vLLM
# without auto tool choice '"auto" tool choice requires --enable-auto-tool-choice', and
# the plain "tools are not supported" / "tool calling is not supported" of others. A 400
# that merely mentions tools ("the tools list is too long", "unexpected tool call id")
# is not one.
_TOOLS_REFUSED = re.compile(
    r"does(?: not|n't) support (?:tools|tool use|tool calls|tool calling|function calling|"
    r"functions)(?![a-z_])"
    r"|(?<![a-z_])(?:tools|tool use|tool calls|tool calling|function calling)"
    r"(?: param(?:eter)?)? (?:is |are )?(?:not supported|unsupported|not enabled|not available)"
    r"|(?<![a-z_])tools param(?:eter)? requires --jinja"
    r"|(?<![a-z_])tool choice requires --enable-auto-tool-choice"
    r"|(?:unsupported|unrecognized|unknown) (?:request )?(?:param(?:eter)?|argument|field)s?"
    r"(?: supplied)?:? ['\"`]?tools(?![a-z_])"
)


def adapt_payload(payload: dict[str, Any], token_param: str, refused: Set[str]) -> dict[str, Any]:
    """`payload` without what this server refused, its cap under the first name it took."""
    for name in ("tool_choice", "parallel_tool_calls", "temperature", "response_format"):
        if name in refused:
            payload.pop(name, None)
    other = OLD_TOKEN_PARAM if token_param == NEW_TOKEN_PARAM else NEW_TOKEN_PARAM
    names = [n for n in (token_param, other) if n not in refused]
    if names:
        return name_token_limit(payload, names[0])
    payload.pop(NEW_TOKEN_PARAM, None)
    payload.pop(OLD_TOKEN_PARAM, None)
    return payload


def _refuses_by_name(text: str, name: str) -> bool:
    """Whether `text` (lower case) says the parameter `name` is refused, the refusal's
    words next to the name (written `max_tokens` or `max tokens`)."""
    for written in dict.fromkeys((name, name.replace("_", " "))):
        named = rf"(?<![a-z_]){re.escape(written)}(?![a-z_])"
        if re.search(_BEFORE_NAME + named, text) or re.search(named + _AFTER_NAME, text):
            return True
    return False


def refused_param(message: str, param: str | None, sent: Set[str]) -> str | None:
    """The droppable parameter (one of `sent`) a 400 says the server does not accept:
    the one its `param` field names, when the message refuses something, else one the
    message refuses by name."""
    text = _plain(message)
    candidates = [name for name in DROPPABLE if name in sent]
    if param in candidates and _REFUSAL.search(text):
        return param
    return next((name for name in candidates if _refuses_by_name(text, name)), None)


def refuses_tools(message: str) -> bool:
    """A 400 saying the model or server cannot take tools at all (`_TOOLS_REFUSED`)."""
    return bool(_TOOLS_REFUSED.search(_plain(message)))


MAX_MESSAGE_CHARS = 4000
"""Of a server's error message, this much is read: a refusal is said in its first line."""


def _plain(message: str) -> str:
    """The message in lower case, cut, each run of whitespace one space (a Pydantic
    server puts the field's name and the refusal on two lines; and no pattern then
    backtracks over a long run of spaces)."""
    return " ".join(message[:MAX_MESSAGE_CHARS].lower().split())


def tools_advice(message: str) -> str:
    """What to do about a server that cannot take tools."""
    if "jinja" in message.lower():
        return "start llama-server with --jinja (its chat template then handles tools)"
    if "enable-auto-tool-choice" in message.lower():
        return (
            "start vLLM with --enable-auto-tool-choice and the --tool-call-parser of the "
            "model (hermes for Qwen 2.5, for instance)"
        )
    return (
        "choose a model that supports tool calling (Ollama: one tagged 'tools', such as "
        "qwen2.5-coder; llama.cpp: start llama-server with --jinja)"
    )
