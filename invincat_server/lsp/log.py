"""Logging for the language server: stderr, mirrored to the editor with window/logMessage.

Stdout belongs to the protocol, so nothing may log there. Set `INVINCAT_LOG_LEVEL`
(DEBUG, INFO, WARNING; default INFO) to change how much Invincat logs.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

_LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}


class _AnsweredErrors(logging.Filter):
    """pygls logs a traceback for every request a handler refused, although the client
    already got the error as its answer; only unexpected exceptions are worth a trace."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, JsonRpcException)


class ClientLogHandler(logging.Handler):
    """Sends Invincat's log records to the editor's output panel (window/logMessage)."""

    def __init__(self, ls: LanguageServer) -> None:
        super().__init__(logging.INFO)
        self._ls = ls
        self._sending = False

    def emit(self, record: logging.LogRecord) -> None:
        # Only from the event loop's thread (frames from two threads would interleave on
        # the stream), and never recursively (sending may itself log an error).
        if self._sending or threading.current_thread() is not threading.main_thread():
            return
        if self._ls.protocol.writer is None:
            return
        self._sending = True
        try:
            kind = _LEVELS.get(record.levelno, types.MessageType.Log)
            self._ls.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record))
            )
        except Exception:  # the editor connection is gone; stderr still has the record
            pass
        finally:
            self._sending = False


def configure_logging(ls: LanguageServer) -> None:
    level = os.environ.get("INVINCAT_LOG_LEVEL", "INFO").upper()
    to_stderr = logging.StreamHandler(sys.stderr)
    to_stderr.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(to_stderr)
    root.setLevel(logging.WARNING)
    invincat = logging.getLogger("invincat")
    invincat.setLevel(getattr(logging, level, logging.INFO))
    to_client = ClientLogHandler(ls)
    to_client.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    invincat.addHandler(to_client)
    # pygls logs every message it sends at INFO; keep its warnings and errors only.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_AnsweredErrors())
