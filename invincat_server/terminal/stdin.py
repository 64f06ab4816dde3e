"""Line input from stdin without blocking the event loop.

A daemon thread reads lines so that Ctrl-C and process exit never wait on a blocked
`readline()` (an executor thread would be joined at exit and hang the program).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import termios
import threading
from collections.abc import Callable, Iterable
from typing import TextIO


class Interrupted(Exception):
    """Ctrl-C at a prompt (an ordinary exception: a KeyboardInterrupt inside an asyncio task
    would stop the whole event loop). Defined here, not beside prompt_toolkit's line editor,
    so catching it does not load prompt_toolkit in runs that never use the editor."""


class LineReader:
    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stdin
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._eof = False
        try:
            self.fileno = self._stream.fileno()
            self.interactive = os.isatty(self.fileno)
        except (OSError, ValueError):
            self.fileno, self.interactive = -1, False
        threading.Thread(target=self._pump, name="invincat-stdin", daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                line = self._stream.readline()
            except (OSError, ValueError):
                line = ""
            if not line:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
                return
            self._loop.call_soon_threadsafe(self._queue.put_nowait, line.rstrip("\r\n"))

    def discard(self) -> int:
        """Drop the lines read ahead (an end of input stays); returns how many."""
        dropped = 0
        while not self._queue.empty():
            if self._queue.get_nowait() is None:
                self._eof = True
            else:
                dropped += 1
        return dropped

    async def readline(self) -> str | None:
        """The next line without its newline, or None at end of input."""
        if self._eof:
            return None
        line = await self._queue.get()
        if line is None:
            self._eof = True
        return line


class PlainPrompter:
    """Prompts for pipes, `--json` and dumb terminals: the prompt text on `stream`, the
    answer one line from stdin. Same methods as `line_editor.LineEditor`."""

    busy = False

    def __init__(self, reader: LineReader, stream: TextIO) -> None:
        self.reader = reader
        self.stream = stream

    async def chat(self, prompt: str) -> str | None:
        return await self.answer(prompt)

    async def answer(self, prompt: str, menu_keys: Iterable[str] = ()) -> str | None:
        self.stream.write(prompt)
        self.stream.flush()
        return await self.reader.readline()

    def discard_type_ahead(self) -> int:
        """Lines typed at a terminal before an approval was asked are no answers to it.
        From a pipe or file they are the answers, given in advance on purpose: kept."""
        if not self.reader.interactive:
            return 0
        with contextlib.suppress(termios.error, OSError):
            termios.tcflush(self.reader.fileno, termios.TCIFLUSH)
        return self.reader.discard()

    async def print_above(self, write: Callable[[], None]) -> None:
        write()
