"""Chat model factory: any OpenAI-compatible endpoint through `langchain-openai`.

Imported lazily by the session so front ends answer quickly before LangChain loads.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import AsyncIterator, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.config import ConfigError, Settings
from invincat_server.runtime.errors import (
    IncompleteResponseError,
    ModelOutputError,
    NotOpenAIResponseError,
    StreamIdleError,
)
from invincat_server.runtime.model_responses import (
    ResponseProbe,
    current_probe,
    describe_response,
    escape_controls,
    http_clients,
)
from invincat_server.runtime.request_params import (
    NEW_TOKEN_PARAM,
    adapt_payload,
    token_limit_param,
)
from invincat_server.runtime.server_refusals import (
    aretrying_stream,
    note_sent,
    retrying_stream,
)

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
    - An answer with nothing OpenAI-shaped in it (no chunk with `choices`: an HTML page, other
      JSON, an empty body) is not an early end but a server that speaks something else,
      and is named as such with what came back (`NotOpenAIResponseError`).
    """

    def __init__(self, probe: ResponseProbe | None = None) -> None:
        self.calls: dict[int, dict[str, str]] = {}
        self.finished = False
        self.probe = probe
        self.openai_shaped = False
        self.capped = False
        """The answer ended at the output-token cap (`finish_reason: length`)."""
        self.secrets: tuple[str, ...] = ()

    def add(self, chunk: Any) -> None:
        reason = (chunk.generation_info or {}).get("finish_reason")
        if reason:
            self.finished = True
            self.capped = reason == "length"
        # langchain-openai marks every chunk made from a `choices` delta with its provider;
        # a stream event without `choices` (`{"foo": "bar"}`) becomes an unmarked empty chunk.
        message = chunk.message
        if message.response_metadata.get("model_provider") or getattr(
            message, "usage_metadata", None
        ):
            self.openai_shaped = True
        for part in getattr(chunk.message, "tool_call_chunks", None) or []:
            entry = self.calls.setdefault(part.get("index") or 0, {"name": "", "args": ""})
            entry["name"] = entry["name"] or (part.get("name") or "")
            entry["args"] += part.get("args") or ""

    def not_openai(self, why: str = "") -> NotOpenAIResponseError:
        probe = self.probe or ResponseProbe()
        what = describe_response(probe.status, probe.content_type, probe.body_start(), self.secrets)
        return NotOpenAIResponseError(f"{what}{why}")

    def check(self) -> None:
        if not self.finished and not self.openai_shaped:
            raise self.not_openai(" (no chat-completion chunk in it)")
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
                    f"({exc.msg}): {_quoted(entry['args'])}{self._cap_note()}"
                ) from None
            if not isinstance(args, dict):
                raise ModelOutputError(
                    f"The model sent arguments for tool `{name}` that are valid JSON but not "
                    f"a JSON object (got {_json_kind(args)}); tool arguments must be an "
                    f"object: {_quoted(entry['args'])}"
                )

    def _cap_note(self) -> str:
        if not self.capped:
            return ""
        return (
            "; the answer reached the output-token cap (max_output_tokens, "
            "INVINCAT_MAX_OUTPUT_TOKENS): raise it for long writes"
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
    from pydantic import Field

    class StrictChatOpenAI(ChatOpenAI):
        """ChatOpenAI that rejects streamed answers that ended early or whose tool
        arguments are not a JSON object (see `_StreamChecker`)."""

        token_limit_param: str = NEW_TOKEN_PARAM
        """The name the output-token cap is sent under (request_params.py)."""
        refused_params: set[str] = Field(default_factory=set, exclude=True)
        """What this server refused by name (HTTP 400): not sent again by this model."""

        def _get_request_payload(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            payload: dict[str, Any] = super()._get_request_payload(*args, **kwargs)
            adapt_payload(payload, self.token_limit_param, self.refused_params)
            # Per request, not on the model, which concurrent turns share.
            note_sent(payload)
            return payload

        def _checker(self) -> _StreamChecker:
            return _checker_for(self.openai_api_key)

        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            parent = super()._stream
            return retrying_stream(self, lambda: _checked(self._checker(), parent(*args, **kwargs)))

        def _astream(self, *args: Any, **kwargs: Any) -> Any:
            parent = super()._astream
            limit = self.stream_chunk_timeout
            return aretrying_stream(
                self, lambda: _achecked(self._checker(), parent(*args, **kwargs), limit)
            )

    return StrictChatOpenAI


def _checked(checker: _StreamChecker, stream: Iterator[Any]) -> Iterator[Any]:
    """LangChain's chunks of one answer, checked (`_StreamChecker`) as they pass."""
    token = current_probe.set(checker.probe)
    try:
        for chunk in stream:
            checker.add(chunk)
            yield chunk
    except json.JSONDecodeError as exc:
        raise checker.not_openai(_bad_event(exc)) from None
    except _SHAPE_ERRORS as exc:
        raise checker.not_openai(_misshapen(exc)) from exc
    finally:
        _reset(token)
    checker.check()


async def _achecked(
    checker: _StreamChecker, stream: AsyncIterator[Any], limit: float | None
) -> AsyncIterator[Any]:
    """The async `_checked`; `limit`: the stream's idle timeout (request_timeout)."""
    token = current_probe.set(checker.probe)
    try:
        async for chunk in stream:
            checker.add(chunk)
            yield chunk
    except json.JSONDecodeError as exc:
        # The SDK parses each stream event as JSON; a line that is not JSON fails
        # there, far from any mention of the server.
        raise checker.not_openai(_bad_event(exc)) from None
    except TimeoutError as exc:
        # langchain-openai's `stream_chunk_timeout` (set from request_timeout): no
        # chunk within it. The SDK's own timeouts are APITimeoutError instead.
        raise _idle(checker, exc, limit) from exc
    except _SHAPE_ERRORS as exc:
        # JSON of the wrong shape (`null`, `{"choices": [null]}`, a number for the
        # text) fails in the SDK's or LangChain's parsing of the chunk.
        raise checker.not_openai(_misshapen(exc)) from exc
    finally:
        _reset(token)
    checker.check()


def _checker_for(api_key: Any) -> _StreamChecker:
    """A checker for one answer, knowing the API key so that no message quotes it."""
    checker = _StreamChecker(ResponseProbe())
    secret = getattr(api_key, "get_secret_value", None)
    checker.secrets = (secret(),) if callable(secret) else ()
    return checker


def _idle(checker: _StreamChecker, exc: TimeoutError, limit: float | None) -> StreamIdleError:
    seconds = getattr(exc, "timeout_s", None) or limit or 0
    if checker.openai_shaped:
        return StreamIdleError("the answer had started, then stalled", seconds)
    what = "no chunk of the answer arrived after the server accepted the request"
    return StreamIdleError(what, seconds)


def _bad_event(exc: json.JSONDecodeError) -> str:
    return f" (a stream event is not JSON: {exc.msg} at character {exc.pos})"


# What parsing a stream event of the wrong shape raises (pydantic's ValidationError is a
# ValueError); the chained exception keeps the traceback for the log.
_SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError, ValueError)


def _misshapen(exc: Exception) -> str:
    from invincat_server.runtime.memory.redaction import redact_and_cut

    # The parser's message may quote the event: redacted and escaped like the body.
    first_line = escape_controls(redact_and_cut((str(exc).splitlines() or [""])[0], 120))
    return f" (a stream event has the wrong shape: {type(exc).__name__}: {first_line})"


def _reset(token: contextvars.Token[ResponseProbe | None]) -> None:
    # A stream abandoned by a consumer in another context cannot reset its probe there;
    # the next call sets its own, so a stale one only costs a stale description.
    with contextlib.suppress(ValueError):
        current_probe.reset(token)


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


def _strict_fields(settings: Settings) -> dict[str, Any]:
    return {"token_limit_param": token_limit_param(settings.base_url)}


def build_chat_model(settings: Settings, *, model: str | None = None) -> ChatOpenAI:
    """A streaming `ChatOpenAI` for `settings` (or the given model name)."""
    check_model_settings(settings)
    sync_client, async_client = http_clients(settings.base_url, settings.request_timeout)
    return _strict_chat_openai()(
        model=model or settings.model or "",
        base_url=settings.base_url,
        api_key=settings.api_key,  # type: ignore[arg-type]
        streaming=True,
        stream_usage=True,
        timeout=settings.request_timeout,
        # langchain-openai ends an async stream after this long without a chunk (120 s by
        # default, whatever `timeout` says): a local server reading a long prompt sends
        # its first chunk after minutes, so the one setting bounds both waits.
        stream_chunk_timeout=settings.request_timeout,
        max_retries=settings.max_retries,
        # A cap on every answer: a small model that loops stops there, not at a full context.
        max_completion_tokens=settings.max_output_tokens or None,
        # Unset: none sent, the server's default (llama-server's 0.8 is a lot for a small
        # model choosing tool calls; docs/configuration.md).
        temperature=settings.temperature,
        # StrictChatOpenAI's own fields (unknown to ChatOpenAI's signature).
        **_strict_fields(settings),
        # The SDK's own clients plus a hook that keeps what the server sent, so an answer
        # that is not OpenAI's can be named (model_responses.py).
        http_client=sync_client,
        http_async_client=async_client,
        # Socket options only shape clients langchain-openai builds; with ours given, ()
        # keeps it from warning that they would hide the proxy settings.
        http_socket_options=(),
    )
