"""Chat model factory: any OpenAI-compatible endpoint through `langchain-openai`.

Imported lazily by the session so front ends answer quickly before LangChain loads.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.config import ConfigError, Settings
from invincat_server.runtime.errors import IncompleteResponseError, ModelOutputError

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI


class _StreamChecker:
    """Watches a streamed answer and refuses one that cannot be trusted to be whole.

    - Tool-call arguments must form a JSON object. LangChain parses streamed arguments
      leniently (a truncated `{"content": "hel` becomes `{"content": "hel"}`), which would let
      a cut-off write be proposed as if it were whole.
    - The answer must end with a `finish_reason`. A server that closes the stream early but
      cleanly (no finish chunk, no `[DONE]`) raises nothing in httpx, the SDK or LangChain,
      so half an answer would otherwise pass for a completed turn.
    """

    def __init__(self) -> None:
        self.calls: dict[int, dict[str, str]] = {}
        self.finished = False

    def add(self, chunk: Any) -> None:
        if (chunk.generation_info or {}).get("finish_reason"):
            self.finished = True
        for part in getattr(chunk.message, "tool_call_chunks", None) or []:
            entry = self.calls.setdefault(part.get("index") or 0, {"name": "", "args": ""})
            entry["name"] = entry["name"] or (part.get("name") or "")
            entry["args"] += part.get("args") or ""

    def check(self) -> None:
        # An early end explains malformed arguments too, so it is reported first.
        if not self.finished:
            raise IncompleteResponseError(
                "the stream ended without a finish_reason (no [DONE]), so the answer is "
                "incomplete and was not used."
            )
        for entry in self.calls.values():
            name = entry["name"] or "?"
            try:
                args = json.loads(entry["args"] or "{}")
            except json.JSONDecodeError as exc:
                raise ModelOutputError(
                    f"The model sent malformed arguments for tool `{name}` "
                    f"({exc.msg}): {_quoted(entry['args'])}"
                ) from None
            if not isinstance(args, dict):
                raise ModelOutputError(
                    f"The model sent arguments for tool `{name}` that are valid JSON but not "
                    f"a JSON object (got {_json_kind(args)}); tool arguments must be an "
                    f"object: {_quoted(entry['args'])}"
                )


def _quoted(raw: str) -> str:
    """The start of the model's raw arguments for an error message, redacted before it
    is cut: the message is shown, logged, and for the memory model stored and sent back
    to it, so half a secret must not survive the cut."""
    from invincat_server.runtime.memory.redaction import redact_and_cut

    return repr(redact_and_cut(raw, 120))


def _json_kind(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


@cache
def _strict_chat_openai() -> type[ChatOpenAI]:
    from langchain_openai import ChatOpenAI

    class StrictChatOpenAI(ChatOpenAI):
        """ChatOpenAI that rejects streamed answers that ended early or whose tool
        arguments are not a JSON object (see `_StreamChecker`)."""

        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            checker = _StreamChecker()
            for chunk in super()._stream(*args, **kwargs):
                checker.add(chunk)
                yield chunk
            checker.check()

        async def _astream(self, *args: Any, **kwargs: Any) -> Any:
            checker = _StreamChecker()
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
