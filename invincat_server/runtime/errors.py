"""Turn failures as one sentence a person can act on (never a traceback)."""

from __future__ import annotations

from invincat_server.runtime.config import Settings


class SessionError(Exception):
    """A request the session refuses; the message says why and what to do instead."""


class ModelOutputError(RuntimeError):
    """The model produced output the agent cannot act on (e.g. malformed tool arguments)."""


class IncompleteResponseError(RuntimeError):
    """A streamed answer ended without saying it was finished (no `finish_reason`): the
    server closed the stream early and the text or tool calls so far may be cut off."""


class NotOpenAIResponseError(RuntimeError):
    """The model server answered with something that is not an OpenAI chat-completions
    response (an HTML page, other JSON, a stream with a line that is not JSON). The
    message says what came back (status, content type, the body's start, redacted)."""


class ToolCallingUnsupportedError(RuntimeError):
    """The model server refused the request's tools (HTTP 400): this model or server
    cannot do tool calling, which every agent of Invincat works through. The message
    names the model and server and says what to do."""


class StreamIdleError(RuntimeError):
    """The model server started answering, then sent no chunk for `request_timeout`
    seconds (a local server still reading a long prompt, a stalled generation)."""

    def __init__(self, what: str, seconds: float) -> None:
        super().__init__(what)
        self.seconds = seconds


class UnknownThreadError(SessionError):
    pass


class ThreadBusyError(SessionError):
    pass


_TIMEOUT_SETTING = "INVINCAT_REQUEST_TIMEOUT (request_timeout in config.toml)"
_BROKEN_STREAM = frozenset({"RemoteProtocolError", "ReadError", "IncompleteRead"})


def _root_cause(exc: BaseException) -> BaseException:
    """The transport error under the SDK's wrappers (the last named cause in the chain)."""
    seen: set[int] = set()
    current: BaseException = exc
    while id(current) not in seen:
        seen.add(id(current))
        nxt = current.__cause__ or current.__context__
        if nxt is None or type(nxt).__module__.startswith("h11"):
            break
        current = nxt
    return current


def _not_openai(where: str, what: str) -> str:
    return (
        f"The model server at {where} did not send an OpenAI-compatible response: {what}. "
        "Check that the base URL (OPENAI_BASE_URL, base_url) is an OpenAI-compatible API, "
        "often ending in /v1."
    )


def _foreign_error_body(exc: BaseException, settings: Settings) -> str:
    """For an HTTP error whose body is not JSON (a proxy's HTML error page, plain text,
    nothing): what came back; empty for a JSON error body, which the SDK's message
    already quotes."""
    from invincat_server.runtime.model_responses import describe_response

    response = getattr(exc, "response", None)
    if response is None:
        return ""
    content_type = response.headers.get("content-type", "")
    try:
        body: bytes = response.content
    except Exception:  # a body never read (the SDK reads error bodies, but be safe)
        body = b""
    if "json" in content_type.lower() and body.strip():
        return ""
    secrets = (settings.api_key or "",)
    return describe_response(response.status_code, content_type, body[:4096], secrets)


def _describe_answer_error(exc: BaseException, where: str) -> str | None:
    """Invincat's own verdicts on an answer (raised by StrictChatOpenAI), else None."""
    if isinstance(exc, ModelOutputError | ToolCallingUnsupportedError):
        return str(exc)
    if isinstance(exc, NotOpenAIResponseError):
        return _not_openai(where, str(exc))
    if isinstance(exc, IncompleteResponseError):
        return f"The connection to the model server at {where} broke mid-response: {exc}"
    if isinstance(exc, StreamIdleError):
        return (
            f"The model server at {where} sent nothing for {exc.seconds:g}s "
            f"while answering ({exc}); raise {_TIMEOUT_SETTING} for slow or local models."
        )
    return None


def describe_error(exc: BaseException, settings: Settings) -> str:
    """Map model/transport errors to a clear message."""
    import openai

    where = settings.base_url or "the default OpenAI endpoint"
    verdict = _describe_answer_error(exc, where)
    if verdict is not None:
        return verdict
    if isinstance(exc, openai.RateLimitError):
        return (
            f"The model server at {where} is rate-limiting requests (HTTP 429) and still was "
            f"after {settings.max_retries} retries; wait and try again."
        )
    if isinstance(exc, openai.APIStatusError):
        foreign = _foreign_error_body(exc, settings)
        if foreign:
            return _not_openai(where, foreign)
        detail = exc.message or ""
        return f"The model server at {where} returned HTTP {exc.status_code}: {detail}".rstrip(": ")
    if isinstance(exc, openai.APITimeoutError):
        return (
            f"The model server at {where} did not answer within {settings.request_timeout:g}s "
            f"(raise {_TIMEOUT_SETTING} for slow or local models)."
        )
    if isinstance(exc, openai.APIConnectionError):
        root = _root_cause(exc)
        # openai ships its own httpx fork, so match transport errors by name, not by class.
        if type(root).__name__ in _BROKEN_STREAM:
            return f"The connection to the model server at {where} broke mid-response: {root}"
        return f"Could not reach the model server at {where}: {root}"
    if type(exc).__name__ in _BROKEN_STREAM:
        return f"The connection to the model server at {where} broke mid-response: {exc}"
    if isinstance(exc, SessionError):
        return str(exc)
    return f"Internal error ({type(exc).__name__}): {exc}"
