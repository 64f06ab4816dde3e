"""Chat model factory: any OpenAI-compatible endpoint through `langchain-openai`.

Imported lazily by the session so front ends answer quickly before LangChain loads.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.config import ConfigError, Settings
from invincat_server.runtime.errors import ModelOutputError

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI


class _ToolArgsChecker:
    """Collects streamed tool-call argument fragments and checks they form valid JSON.

    LangChain parses streamed arguments leniently (a truncated `{"content": "hel` becomes
    `{"content": "hel"}`), which would let a cut-off write be proposed as if it were whole.
    We refuse such a response instead: the turn fails with a clear error.
    """

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, str]] = {}

    def add(self, chunk: Any) -> None:
        for part in getattr(chunk.message, "tool_call_chunks", None) or []:
            entry = self.calls.setdefault(part.get("index") or 0, {"name": "", "args": ""})
            entry["name"] = entry["name"] or (part.get("name") or "")
            entry["args"] += part.get("args") or ""

    def check(self) -> None:
        for entry in self.calls.values():
            try:
                json.loads(entry["args"] or "{}")
            except json.JSONDecodeError as exc:
                raise ModelOutputError(
                    f"The model sent malformed arguments for tool `{entry['name'] or '?'}` "
                    f"({exc.msg}): {entry['args'][:120]!r}"
                ) from None


@cache
def _strict_chat_openai() -> type[ChatOpenAI]:
    from langchain_openai import ChatOpenAI

    class StrictChatOpenAI(ChatOpenAI):
        """ChatOpenAI that rejects streamed tool calls whose arguments are not valid JSON."""

        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            checker = _ToolArgsChecker()
            for chunk in super()._stream(*args, **kwargs):
                checker.add(chunk)
                yield chunk
            checker.check()

        async def _astream(self, *args: Any, **kwargs: Any) -> Any:
            checker = _ToolArgsChecker()
            async for chunk in super()._astream(*args, **kwargs):
                checker.add(chunk)
                yield chunk
            checker.check()

    return StrictChatOpenAI


def check_model_settings(settings: Settings) -> None:
    """Raise a one-line ConfigError naming what to set when the model is not configured."""
    if not settings.api_key:
        raise ConfigError(
            "OPENAI_API_KEY is not set: export OPENAI_API_KEY=<key> "
            "(any non-empty value for local servers such as Ollama or vLLM)."
        )
    if not settings.model:
        raise ConfigError(
            "No model configured: export INVINCAT_MODEL=<model name> "
            "(or pass --model, or set model in $INVINCAT_HOME/config.toml)."
        )


def build_chat_model(settings: Settings, *, model: str | None = None) -> ChatOpenAI:
    """A streaming `ChatOpenAI` for `settings` (or the given model name)."""
    check_model_settings(settings)
    return _strict_chat_openai()(
        model=model or settings.model or "",
        base_url=settings.base_url,
        api_key=settings.api_key,  # type: ignore[arg-type]
        streaming=True,
        stream_usage=True,
        timeout=settings.request_timeout,
        max_retries=settings.max_retries,
    )
