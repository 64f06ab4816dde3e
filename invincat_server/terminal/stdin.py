"""Line input from stdin without blocking the event loop.

A daemon thread reads lines so that Ctrl-C and process exit never wait on a blocked
`readline()` (an executor thread would be joined at exit and hang the program).
"""

from __future__ import annotations

import asyncio
import sys
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

    async def print_above(self, write: Callable[[], None]) -> None:
        write()
