"""JSON-RPC errors for Invincat requests, and the guard every feature runs under.

A feature that fails must answer with an error a person can act on and leave the server
serving: `request_handler` maps expected failures to JSON-RPC errors with their message
and logs unexpected ones; `notification_handler` logs and swallows, since a notification
has no one to answer.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcServerError,
)

from invincat_server.lsp.protocol import ErrorCode, ParamsError

log = logging.getLogger("invincat.lsp")

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def rpc_error(code: ErrorCode, message: str) -> JsonRpcException:
    if code == ErrorCode.INVALID_PARAMS:
        return JsonRpcInvalidParams(message)
    return JsonRpcServerError(message, int(code))


def session_error(exc: Exception) -> JsonRpcException | None:
    """A request the session refused, with its message (which says what to do instead);
    None if `exc` is not a refusal."""
    # Imported here, not at the top: runtime.errors pulls in runtime.config → tomllib →
    # datetime, ~30 ms the server must not spend before answering `initialize`.
    from invincat_server.runtime.editor_context import ContextError
    from invincat_server.runtime.errors import SessionError, ThreadBusyError, UnknownThreadError

    if not isinstance(exc, SessionError):
        return None
    if isinstance(exc, ContextError):  # a file in `context` the agent may not read
        return rpc_error(ErrorCode.INVALID_PARAMS, str(exc))
    if isinstance(exc, UnknownThreadError):
        return rpc_error(ErrorCode.UNKNOWN_THREAD, str(exc))
    if isinstance(exc, ThreadBusyError):
        return rpc_error(ErrorCode.THREAD_BUSY, str(exc))
    return rpc_error(ErrorCode.REFUSED, str(exc))


def request_handler(method: str) -> Callable[[F], F]:
    """Answer expected failures with their message; log the unexpected ones."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        async def handler(*args: Any) -> Any:
            try:
                return await fn(*args)
            except JsonRpcException:
                raise
            except ParamsError as exc:
                raise JsonRpcInvalidParams(str(exc)) from None
            except Exception as exc:
                refused = session_error(exc)
                if refused is not None:
                    raise refused from None
                log.exception("%s failed", method)
                raise JsonRpcInternalError(
                    f"Invincat failed to handle {method} ({type(exc).__name__}: {exc}); "
                    "the server log (stderr / the editor's output panel) has the details."
                ) from None

        return handler  # type: ignore[return-value]

    return wrap


def notification_handler(method: str) -> Callable[[F], F]:
    """Log a failing notification handler instead of reporting it to the user."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        async def handler(*args: Any) -> None:
            try:
                await fn(*args)
            except Exception:
                log.exception("handling %s failed", method)

        return handler  # type: ignore[return-value]

    return wrap
