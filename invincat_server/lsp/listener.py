"""Serve one authenticated editor over a listening socket (`--tcp`, `--socket`), then stop.

There is one protocol state (one session, one set of open documents) per process, so one
editor is served; the process ends when that editor disconnects, or on SIGINT / SIGTERM.
Connections are admitted by the transport's check (`transport.py`): one that fails it is
closed without an answer and does not count, so a stranger cannot take the editor's place
or keep it out. While the editor is connected, any further connection is closed at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from invincat_server.lsp.transport import TransportError, handle_body, run_messages

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatProtocol

log = logging.getLogger("invincat.lsp")

Admit = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[tuple[bytes | None, str]]]
"""(the first message body to handle, or b"" if none was read, "") or (None, why refused)."""
Listen = Callable[[Callable[..., Awaitable[None]]], Awaitable[asyncio.Server]]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class OneEditor:
    def __init__(
        self,
        protocol: InvincatProtocol,
        stop: threading.Event,
        admit: Admit,
        error_handler: Callable[[Exception], Any],
    ) -> None:
        self._protocol = protocol
        self._stop = stop
        self._admit = admit
        self._error_handler = error_handler
        self._editor: asyncio.StreamWriter | None = None
        self._waiting: set[asyncio.StreamWriter] = set()
        self._ended = asyncio.Event()
        self._stopping = asyncio.Event()

    async def serve(self, listen: Listen) -> None:
        """Listen, serve the editor until it disconnects or a stop signal arrives."""
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self._on_signal, sig)
        try:
            server = await listen(self._on_connection)
        except OSError as exc:  # the port is taken, the address is not ours...
            raise TransportError(str(exc)) from None
        async with server:
            ended = asyncio.ensure_future(self._ended.wait())
            stopping = asyncio.ensure_future(self._stopping.wait())
            await asyncio.wait({ended, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
        # Closing the streams ends their reads (EOF): the editor's loop returns, the
        # checks of waiting strangers give up.
        for writer in self._waiting:
            writer.close()
        if self._editor is not None:
            self._editor.close()
            await ended
        ended.cancel()

    def _on_signal(self, sig: signal.Signals) -> None:
        if not self._stopping.is_set():
            log.info("%s: stopping the language server.", sig.name)
        self._stopping.set()

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        # asyncio (3.11) logs a traceback for a connection task that ends cancelled, which
        # is how a pending check ends when the server stops: end quietly instead.
        with contextlib.suppress(asyncio.CancelledError):
            await self._connection(reader, writer)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        peer = _describe_peer(writer)
        if self._editor is not None or self._stopping.is_set():
            log.warning("Refused a connection from %s: an editor is already connected.", peer)
            writer.close()
            return
        self._waiting.add(writer)
        try:
            first, why = await self._admit(reader, writer)
        finally:
            self._waiting.discard(writer)
        if first is not None and (self._editor is not None or self._stopping.is_set()):
            first, why = None, "an editor is already connected"
        if first is None:
            log.warning("Refused a connection from %s: %s.", peer, why)
            writer.close()
            return
        self._editor = writer
        log.info("Editor connected from %s.", peer)
        self._protocol.set_writer(writer)
        try:
            if first:
                handle_body(self._protocol, first, self._error_handler)
            await run_messages(reader, self._protocol, self._stop, self._error_handler)
        except SystemExit:
            pass  # the `exit` notification: pygls' way to end the connection
        finally:
            writer.close()
            self._ended.set()


def _describe_peer(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return "a local process"
