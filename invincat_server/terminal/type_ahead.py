"""The REPL's terminal between its prompts: keys typed ahead keep their Enters, unechoed.

prompt_toolkit puts the terminal in raw mode only while a prompt is shown. Before the
first prompt and while a turn runs, the terminal would be in the shell's cooked mode,
which echoes typed keys into the scrollback (into the answer being streamed) and turns
Enter (CR) into a line feed (ICRNL). The next prompt read that LF as Ctrl-J, "insert a
newline", so `hello⏎` typed during a turn joined the next prompt instead of being sent.

So for the REPL's whole life the terminal is kept `quiet`: no echo, no line editing, no
CR→LF, signals kept (Ctrl-C still cancels a turn, Ctrl-Z still suspends). Keys typed then
stay in the kernel's queue as the bytes the keys sent, and the next prompt reads them as
keys: an Enter submits, as in a shell, and prompt_toolkit keeps the keys it read beyond
that Enter for the prompt after (its type-ahead store). Keys typed before the terminal
went quiet (while the process started) were translated already: they are drained once,
their LFs read as the Enters they were.

Approvals never take type-ahead (`discard`): a key typed before the question was shown
is not an answer to it.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import termios

_LFLAG, _IFLAG, _CC = 3, 0, 6  # indexes in termios.tcgetattr's list
_DRAIN_CHUNK = 65536


class QuietTerminal:
    """The terminal on `fd` in quiet mode (see the module doc) until `restore`."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.saved = termios.tcgetattr(fd)  # as the shell handed it over

    def enter(self) -> str:
        """Go quiet; returns the keys typed before, an Enter as CR (what the key sends)."""
        self._quiet()
        return self._drain().replace(b"\n", b"\r").decode("utf-8", "surrogateescape")

    def restore(self) -> None:
        """The terminal as it was handed over (at exit, and while suspended)."""
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)

    def suspend(self) -> None:
        """Ctrl-Z while a turn runs: hand the shell its terminal modes, stop, and take back
        ours when continued (`fg`)."""
        try:
            ours = termios.tcgetattr(self.fd)
        except (termios.error, OSError):
            ours = None
        self.restore()
        os.kill(os.getpid(), signal.SIGSTOP)  # stopped here until SIGCONT
        if ours is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(self.fd, termios.TCSADRAIN, ours)

    def discard(self) -> int:
        """Throw away the keys typed ahead; returns how many bytes there were."""
        dropped = len(self._drain())
        with contextlib.suppress(termios.error, OSError):
            termios.tcflush(self.fd, termios.TCIFLUSH)
        return dropped

    def _quiet(self) -> None:
        modes = termios.tcgetattr(self.fd)
        modes[_LFLAG] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN)
        modes[_IFLAG] &= ~termios.ICRNL
        cc = list(modes[_CC])
        cc[termios.VMIN], cc[termios.VTIME] = 1, 0
        modes[_CC] = cc
        termios.tcsetattr(self.fd, termios.TCSANOW, modes)  # NOW: keep what is queued

    def _drain(self) -> bytes:
        """What is in the input queue now, without waiting for more."""
        data = b""
        with contextlib.suppress(OSError):
            while select.select([self.fd], [], [], 0)[0]:
                chunk = os.read(self.fd, _DRAIN_CHUNK)
                if not chunk:
                    break
                data += chunk
        return data


def quiet_terminal(fd: int) -> QuietTerminal | None:
    """A QuietTerminal for `fd`, None when it is no terminal."""
    try:
        return QuietTerminal(fd)
    except (termios.error, OSError):
        return None
