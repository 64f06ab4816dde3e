"""A model server's 400 that names a parameter it does not take, or its tools.

Servers that copy OpenAI's API refuse different extras: `tool_choice` (a forced tool, as
the memory agent asks), `parallel_tool_calls`, one name or the other of the output-token
cap. The model's stream (models.py) sends the request again without the parameter the 400
named, and that model never sends it again (said once, on the `invincat.models` log,
which the terminal shows on stderr). A 400 that refuses the tools themselves ends the turn
with what to do (`ToolCallingUnsupportedError`): every agent of Invincat works through
tool calls.

What a request sent is kept per request, not on the model: one model instance serves
every session of a language server or ACP process, and two turns streaming at once must
not judge one's 400 by the other's parameters. A context variable does it: each asyncio
task (and thread) has its own, and a request's payload is built and its 400 handled in
the same one (`retrying_stream`).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from invincat_server.runtime.errors import ToolCallingUnsupportedError
from invincat_server.runtime.model_responses import escape_controls
from invincat_server.runtime.request_params import (
    DROPPABLE,
    refused_param,
    refuses_tools,
    tools_advice,
)

log = logging.getLogger("invincat.models")

_sent: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "invincat_sent_params", default=frozenset()
)


def note_sent(payload: dict[str, Any]) -> None:
    """Remember the parameters of the request being sent, for this task or thread only
    (called as the payload is built)."""
    _sent.set(frozenset(payload))


def learn_from_refusal(model: Any, exc: Exception) -> bool:
    """After a 400 to `model` (a StrictChatOpenAI): True when it refused a parameter the
    request can go without (now in `model.refused_params`, said once); raises
    ToolCallingUnsupportedError when it refused the tools; False otherwise."""
    message = str(getattr(exc, "message", "") or exc)
    param = getattr(exc, "param", None)
    sent = _sent.get() - model.refused_params
    where = model.openai_api_base or "the default OpenAI endpoint"
    refused = refused_param(message, param if isinstance(param, str) else None, sent)
    if refused is not None:
        model.refused_params.add(refused)
        log.warning(
            "the model server at %s refused `%s` (HTTP 400: %s); this session no longer sends it",
            where,
            refused,
            server_says(message),
        )
        return True
    if "tools" in sent and refuses_tools(message):
        raise ToolCallingUnsupportedError(
            f"The model `{model.model_name}` at {where} cannot call tools (HTTP 400: "
            f"{server_says(message)}), and Invincat works through tool calls: "
            f"{tools_advice(message)}."
        ) from exc
    return False


def server_says(message: str) -> str:
    """A server's error message inside ours: redacted, cut, controls escaped, quoted."""
    from invincat_server.runtime.memory.redaction import redact_and_cut

    return repr(escape_controls(redact_and_cut(message, 200)))


def retrying_stream(model: Any, stream: Callable[[], Iterator[Any]]) -> Iterator[Any]:
    """`stream()`, sent again without each parameter a 400 refuses (it comes before the
    first chunk), at most once per droppable parameter."""
    import openai

    for _ in range(len(DROPPABLE) + 1):
        started = False
        _sent.set(frozenset())  # nothing of an earlier request counts for this one
        try:
            for chunk in stream():
                started = True
                yield chunk
            return
        except openai.BadRequestError as exc:
            if started or not learn_from_refusal(model, exc):
                raise


async def aretrying_stream(
    model: Any, stream: Callable[[], AsyncIterator[Any]]
) -> AsyncIterator[Any]:
    """The async `retrying_stream`."""
    import openai

    for _ in range(len(DROPPABLE) + 1):
        started = False
        _sent.set(frozenset())  # nothing of an earlier request counts for this one
        try:
            async for chunk in stream():
                started = True
                yield chunk
            return
        except openai.BadRequestError as exc:
            if started or not learn_from_refusal(model, exc):
                raise
