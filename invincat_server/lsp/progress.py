"""`$/progress` work-done progress for each turn, cancellable from the editor.

For a client that supports `window.workDoneProgress`, every turn (chat turns and turns
resumed by a resolution after a restart) gets a progress token: the client's own
`workDoneToken` from the chat request if it sent one, else a token the server creates with
`window/workDoneProgress/create`. `window/workDoneProgress/cancel` on that token cancels
the turn. Nothing is sent on a token before the client acknowledged its creation, as the
spec requires; a turn that ended meanwhile still gets its begin/end pair.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer

log = logging.getLogger("invincat.lsp.progress")

Token = int | str


@dataclass
class _Bar:
    token: Token
    turn_id: str
    ready: bool = False
    ended: str | None = None  # final status once the turn ended
    message: str = "Working"


class TurnProgress:
    """One progress bar per running turn."""

    def __init__(self, ls: InvincatLanguageServer) -> None:
        self._ls = ls
        self._bars: dict[str, _Bar] = {}
        self._client_tokens: dict[str, Token] = {}

    def use_client_token(self, turn_id: str, token: Token) -> None:
        """The chat request carried a `workDoneToken`: report on it instead of creating one."""
        self._client_tokens[turn_id] = token

    def on_event(self, turn_id: str, event: Any) -> None:
        kind = event.type
        if kind == "turn_start":
            self._start(turn_id)
        elif kind == "turn_end":
            self._end(turn_id, event.status)
        elif kind == "tool_call":
            self._report(turn_id, event.words.progressive)
        elif kind == "approval_requested":
            self._report(turn_id, f"Waiting for approval: {event.description}")
        elif kind == "approval_resolved":
            self._report(turn_id, "Working")
        elif kind == "message_delta":
            self._report(turn_id, "Answering")

    # lifecycle --------------------------------------------------------------------
    def _start(self, turn_id: str) -> None:
        token = self._client_tokens.pop(turn_id, None)
        if token is not None:
            bar = self._bars[turn_id] = _Bar(token, turn_id)
            self._begin(bar)
            return
        if not get_capability(self._ls.client_capabilities, "window.work_done_progress", False):
            return
        bar = self._bars[turn_id] = _Bar(f"invincat-turn-{turn_id}", turn_id)
        created = self._ls.protocol.send_request(
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
            types.WorkDoneProgressCreateParams(token=bar.token),
        )
        created.add_done_callback(lambda fut: self._created(bar, fut))

    def _created(self, bar: _Bar, fut: Future[Any]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            log.info("client refused progress token %s: %s", bar.token, fut.exception())
            self._bars.pop(bar.turn_id, None)
            return
        self._begin(bar)
        if bar.ended is not None:
            self._finish(bar)

    def _begin(self, bar: _Bar) -> None:
        cancel: Future[None] = Future()
        cancel.add_done_callback(lambda fut: self._cancelled(bar, fut))
        # pygls cancels the future registered under the token on
        # window/workDoneProgress/cancel; we turn that into a turn cancellation.
        self._ls.work_done_progress.tokens[bar.token] = cancel
        bar.ready = True
        self._ls.work_done_progress.begin(
            bar.token,
            types.WorkDoneProgressBegin(title="Invincat", message=bar.message, cancellable=True),
        )

    def _cancelled(self, bar: _Bar, fut: Future[None]) -> None:
        if fut.cancelled() and bar.ended is None:
            log.info("progress %s cancelled by the client: cancelling turn", bar.token)
            self._ls.projects.cancel_turn(bar.turn_id)

    def _report(self, turn_id: str, message: str) -> None:
        bar = self._bars.get(turn_id)
        if bar is None or bar.message == message:
            return
        bar.message = message
        if bar.ready and bar.ended is None:
            self._ls.work_done_progress.report(
                bar.token, types.WorkDoneProgressReport(message=message)
            )

    def _end(self, turn_id: str, status: str) -> None:
        bar = self._bars.get(turn_id)
        if bar is None:
            return
        bar.ended = status
        if bar.ready:
            self._finish(bar)

    def _finish(self, bar: _Bar) -> None:
        self._bars.pop(bar.turn_id, None)
        # Popped, not cancelled: cancelling the future would cancel the turn.
        self._ls.work_done_progress.tokens.pop(bar.token, None)
        self._ls.work_done_progress.end(
            bar.token, types.WorkDoneProgressEnd(message=f"Turn {bar.ended}")
        )
