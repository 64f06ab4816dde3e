"""Rendering events for people (compact, streamed) or machines (`--json`, one per line)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, TextIO

from invincat_server.runtime.events import (
    ApprovalRequested,
    ApprovalResolved,
    Error,
    Event,
    MemoryChanged,
    MessageDelta,
    ToolCall,
    ToolOutput,
    ToolResult,
    TurnEnd,
    TurnStart,
)

if TYPE_CHECKING:
    from invincat_server.terminal.status_line import StatusLine


def echoes_ctrl_c(stream: TextIO) -> bool:
    """Whether the terminal `stream` shows has just echoed a Ctrl-C as `^C` where its
    cursor was (a cooked-mode tty with ECHO and ECHOCTL, as by default): a message after a
    cancel must then start on a line of its own, not as "^C(turn cancelled)"."""
    import termios

    try:
        if not (stream.isatty() and sys.stdin.isatty()):
            return False
        lflags = termios.tcgetattr(sys.stdin.fileno())[3]
    except (OSError, ValueError, termios.error):  # closed, not a tty after all
        return False
    return bool(lflags & termios.ECHO and lflags & termios.ECHOCTL)


class JsonRenderer:
    """`--json`: every event as one JSON object per line on stdout."""

    def __init__(self, out: TextIO | None = None, prompts: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.prompts = prompts or sys.stderr  # approval prompts never pollute the JSON stream

    def event(self, event: Event) -> None:
        if isinstance(event, ToolOutput):
            return  # live output is for the rich view; `tool_result` carries it for scripts
        self.out.write(json.dumps(event.to_json_dict(), ensure_ascii=False) + "\n")
        self.out.flush()

    def note(self, text: str) -> None:
        self.prompts.write(text + "\n")
        self.prompts.flush()

    def pause(self) -> None:
        """Nothing live to stop in JSON output."""

    def expand(self, number: int | None) -> None:
        self.note("/expand shows tool output in the terminal view; --json has it in full.")

    def post_turn(self, event: Event) -> None:
        """Events after `turn_end` (memory work) go to stderr, so the turn's stream on
        stdout always ends with `turn_end`."""
        self.prompts.write(json.dumps(event.to_json_dict(), ensure_ascii=False) + "\n")
        self.prompts.flush()


class HumanRenderer:
    """Streams the answer as it arrives; tool calls and results as compact lines."""

    def __init__(
        self,
        out: TextIO | None = None,
        err: TextIO | None = None,
        *,
        status: StatusLine | None = None,
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.prompts = self.out
        self._mid_line = False
        self.results: list[ToolResult] = []  # this session's tool results, for `/expand`
        # A one-shot chat at a terminal: the live status line on stderr while it waits.
        self.status = status

    def _stop_status(self) -> None:
        if self.status is not None:
            self.status.stop()

    def _show_status(self, label: str | None = None) -> None:
        if self.status is not None:
            self.status.show(label)

    def _line(self, text: str, stream: TextIO | None = None) -> None:
        stream = stream or self.out
        self._stop_status()  # erased first: nothing is written over or beside it
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        stream.write(text + "\n")
        stream.flush()

    def note(self, text: str) -> None:
        self._line(text)

    def post_turn(self, event: Event) -> None:
        if isinstance(event, MemoryChanged):
            self._line(f"memory: {event.scope} memory updated (batch {event.batch_id})", self.err)

    def event(self, event: Event) -> None:
        if isinstance(event, TurnStart) and self.status is not None:
            self.status.restart_clock()
            self._show_status("thinking…")
        elif isinstance(event, MessageDelta):
            # The answer streams on the same terminal: the status line stays away until
            # the model's next step (a tool call), so it never lands inside a line.
            self._stop_status()
            self.out.write(event.text)
            self.out.flush()
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, ToolCall):
            indent = "    " * event.depth  # a subagent's calls sit under its `task`
            self._line(f"{indent}● {event.summary or event.name}")
            self._show_status(event.words.progressive + "…")
        elif isinstance(event, ToolResult):
            self.results.append(event)
            mark = {"success": "⎿", "error": "⎿ error:", "rejected": "⎿ rejected:"}[event.status]
            indent = "    " * event.depth
            self._line(f"{indent}  {mark} {event.summary}")
            self._show_status("thinking…")
        elif isinstance(event, ApprovalResolved):
            extra = f" — remembered: {event.remembered}" if event.remembered else ""
            self._line(f"  ✓ {event.decision}{extra}")
            self._show_status()  # the approved call runs now
        elif isinstance(event, ApprovalRequested):
            self._stop_status()  # a question follows: nothing may redraw over it
        elif isinstance(event, Error):
            self._line(f"error: {event.message}", self.err)
        elif isinstance(event, TurnEnd):
            self._stop_status()
            if self._mid_line:
                self.out.write("\n")
                self._mid_line = False
            if event.status == "cancelled":
                # Nothing of ours is mid-line, but the tty's echoed ^C may be.
                self._line(_after_ctrl_c(self.err) + "(turn cancelled)", self.err)
            self.out.flush()

    def pause(self) -> None:
        """Before a prompt: the status line goes (the rich renderer stops its live area)."""
        self._stop_status()

    def diff_collapsed(self, request: ApprovalRequested) -> bool:
        return False  # plain output always shows the whole diff

    def full_diff(self, request: ApprovalRequested) -> None:
        self.approval(request)

    def expand(self, number: int | None) -> None:
        """`/expand [N]`: the full output of tool result N (1 = first of this session), or of
        the latest one."""
        if not self.results:
            self.note("No tool output yet.")
            return
        index = len(self.results) if number is None else number
        if not 1 <= index <= len(self.results):
            self.note(f"No tool output #{index}; there are {len(self.results)}.")
            return
        result = self.results[index - 1]
        self.note(f"#{index} {result.name} ({result.status}):")
        self.note(result.content.rstrip("\n"))

    def approval(self, request: ApprovalRequested) -> None:
        """Show what is asked: description, and the diff for file changes."""
        self._line(f"⚠ Approval needed: {request.description}")
        if request.diff:
            for line in request.diff.rstrip("\n").splitlines():
                self._line("    " + line)
        elif request.tool_name != "execute":
            self._line(f"    args: {json.dumps(request.args, ensure_ascii=False)[:500]}")


def describe_approval_for_prompt(request: ApprovalRequested, stream: TextIO) -> None:
    """Plain-text approval description for `--json` mode (on stderr)."""
    stream.write(f"Approval needed: {request.description}\n")
    if request.diff:
        stream.write(request.diff if request.diff.endswith("\n") else request.diff + "\n")
    stream.flush()


def _after_ctrl_c(stream: TextIO) -> str:
    return "\n" if echoes_ctrl_c(stream) else ""
