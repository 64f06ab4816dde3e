"""The live status line of a one-shot `invincat chat PROMPT` at a terminal.

One line on stderr while the turn waits for the model or runs a tool: a spinner, what it
is doing (`thinking…`, or the running call in the phrase book's words: ``Running `pytest
-q`…``), the elapsed seconds and the model client's retries, as the REPL's
(rich_render.status_text). It is drawn only when stderr is a terminal and never with
`--json`, so pipes and scripts get exactly the plain output.
It is transient: it is erased before anything else is written (an answer, a tool line, an
approval question, a notice), so it never mixes with the output.
"""

from __future__ import annotations

import threading
import time
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner

from invincat_server.terminal.retry_watch import RetryWatch
from invincat_server.terminal.rich_render import status_text

THINKING = "thinking…"


class StatusLine:
    def __init__(self, stream: TextIO, retries: RetryWatch | None = None) -> None:
        self.stream = stream
        self.console = Console(file=stream, highlight=False)
        self.retries = retries
        self.label = THINKING
        self.started = time.monotonic()
        self._spinner = Spinner("dots")
        self._live: Live | None = None
        # Retry notices come from the model client's logging, possibly on another thread.
        self._lock = threading.RLock()

    def restart_clock(self) -> None:
        self.started = time.monotonic()

    def _renderable(self) -> Spinner:
        self._spinner.update(text=status_text(self.label, self.started, [], self.retries))
        return self._spinner

    def show(self, label: str | None = None) -> None:
        """Draw (or keep drawing) the line, saying `label` (default: the last one)."""
        with self._lock:
            if label is not None:
                self.label = label
            if self._live is not None:
                return
            self._live = Live(
                get_renderable=self._renderable,
                console=self.console,
                transient=True,
                refresh_per_second=4,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()

    def stop(self) -> bool:
        """Erase the line; True if it was shown."""
        with self._lock:
            live, self._live = self._live, None
            if live is None:
                return False
            live.stop()
            return True

    def print_above(self, text: str) -> None:
        """A line of its own on stderr, the status line redrawn under it."""
        with self._lock:
            was_shown = self.stop()
            self.stream.write(text + "\n")
            self.stream.flush()
            if was_shown:
                self.show()
