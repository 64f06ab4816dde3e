"""`invincat chat` in a real pty (pexpect), read as a person sees it.

prompt_toolkit draws with escape sequences (cursor moves instead of spaces, redraws while
typing), so waits match the text with those sequences taken out, never the raw bytes.
"""

from __future__ import annotations

import re
import time

import pexpect
import pyte

from tests.terminal.cli_process import INVINCAT

DEADLINE = 90  # generous: the machine is shared; every wait ends on the awaited text

_CURSOR_FORWARD = re.compile(r"\x1b\[(\d*)C")
_ESCAPES = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]"  # CSI: colours, cursor moves, modes
    r"|\x1b\][^\x07\x1b]*(\x07|\x1b\\)"  # OSC: window title
    r"|\x1b[()][0-9A-B]|\x1b[=>78]"  # charsets, keypad, save/restore cursor
)


def visible(raw: str) -> str:
    """What the terminal showed, roughly: escape sequences out, cursor-forward as spaces."""
    text = _CURSOR_FORWARD.sub(lambda m: " " * int(m.group(1) or 1), raw)
    text = _ESCAPES.sub("", text)
    return text.replace("\x08", "").replace("\r", "")


class Terminal:
    def __init__(self, args: list[str], env: dict[str, str], rows: int = 40, cols: int = 200):
        # pexpect does not answer cursor-position requests; tell prompt_toolkit not to ask.
        self.child = pexpect.spawn(
            INVINCAT,
            args,
            env={**env, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm-256color"},
            encoding="utf-8",
            timeout=DEADLINE,
            dimensions=(rows, cols),
        )
        self.raw = ""
        self.pos = 0  # in visible(self.raw): where the next expect starts looking

    @property
    def screen(self) -> str:
        return visible(self.raw)

    def expect(self, text: str, timeout: float = DEADLINE) -> str:
        """Wait until `text` shows after the last match; returns what showed before it."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.screen
            found = shown.find(text, self.pos)
            if found >= 0:
                before = shown[self.pos : found]
                self.pos = found + len(text)
                return before
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} not shown within {timeout}s; screen:\n{shown}")
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=min(left, 1))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF as exc:
                raise AssertionError(f"ended before {text!r}; screen:\n{shown}") from exc

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def line(self, text: str) -> None:
        self.child.send(text + "\r")

    def paste(self, text: str) -> None:
        """A paste as a terminal delivers it with bracketed paste on."""
        self.child.send("\x1b[200~" + text + "\x1b[201~")

    def ctrl_c(self) -> None:
        # The key itself: the tty turns it into SIGINT only in cooked mode, as in real use.
        self.child.sendintr()

    def ctrl_d(self) -> None:
        self.child.sendeof()

    def wait_exit(self, timeout: float = DEADLINE) -> int:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=1)
            except pexpect.TIMEOUT:
                if time.monotonic() > deadline:
                    raise AssertionError(f"did not exit; screen:\n{self.screen}") from None
            except pexpect.EOF:
                break
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -1

    def close(self) -> None:
        if self.child.isalive():
            self.child.close(force=True)


def final_screen(raw: str, rows: int = 40, cols: int = 200) -> list[str]:
    """What a terminal of that size shows once everything was drawn (a VT100 screen in
    memory: cursor moves and erases applied; trailing blank lines dropped)."""
    screen = pyte.Screen(cols, rows)
    stream = pyte.Stream(screen)
    stream.feed(raw.replace("\n", "\r\n"))  # the pty's onlcr, which pexpect's log lacks
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines
