"""Rendering for a person at a colour terminal, on rich.

Used only when stdout is a terminal and NO_COLOR is unset (and not `--json`); everything else
keeps `render.HumanRenderer`'s plain, stable lines. Same methods as HumanRenderer:

- the answer streams into a live area (its last lines, under a status line with what runs
  — "working", or the running call in the phrase book's words: "Running `make`" —, the
  elapsed time, output tokens so far, context use, and the model client's retries with
  why), then is printed once as Markdown with highlighted code;
- a running `execute` shows its last output lines under the status line (`tool_output`);
  they go when its result arrives, which is one line with `/expand N` for all of it;
- tool results are one line with `/expand N` to see them whole; todos are a checklist;
- diffs are coloured; long ones are cut to a head with a summary (`d` shows all);
- writes that a session or workspace rule approved still show a short diff of what changed.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import time
from collections import deque
from pathlib import Path
from typing import TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.spinner import Spinner
from rich.text import Text

from invincat_server.runtime.events import (
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Error,
    Event,
    MemoryChanged,
    MessageDelta,
    Todos,
    ToolCall,
    ToolOutput,
    ToolResult,
    TurnEnd,
    TurnStart,
)
from invincat_server.runtime.tool_traits import WRITES_FILES
from invincat_server.terminal.printable import strip_terminal_control
from invincat_server.terminal.render import HumanRenderer, echoes_ctrl_c
from invincat_server.terminal.retry_watch import RetryWatch

DIFF_HEAD_LINES = 40  # an approval diff longer than this is cut, with `d` to see it all
RULE_DIFF_LINES = 12  # a rule-approved write shows this much of what changed
CODE_THEME = "monokai"
LIVE_OUTPUT_LINES = 5  # lines of a running command's output shown under the status line
CHARS_PER_TOKEN = 4  # the status line's token count is approximate: characters / 4


# A result summary with a line count (runtime/tool_summary.py): "head (+3 lines)", and for
# a command its exit status after it: "(no output) (+1 line) [exit code: 0]".
_COUNTED = re.compile(r"(?P<head>.*) \(\+(?P<more>\d+ lines?)\)(?P<status> \[exit code: [^\]]*\])?")


def approx_tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def diff_text(diff: str, limit: int | None = None) -> tuple[Text, int]:
    """A unified diff coloured line by line; with `limit`, only its first lines. Returns the
    text and how many lines were left out."""
    lines = diff.rstrip("\n").splitlines()
    shown = lines if limit is None else lines[:limit]
    text = Text()
    for line in shown:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        text.append("    " + line + "\n", style=style)
    return text, len(lines) - len(shown)


def diff_summary(diff: str) -> str:
    lines = diff.splitlines()
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return f"+{added} -{removed}"


TODO_MARKS = {"completed": ("☑", "green"), "in_progress": ("◐", "bold yellow")}


def todo_checklist(items: list[dict[str, object]]) -> Text:
    """The agent's todo list as a checklist, printed again whenever it changes."""
    text = Text()
    for item in items:
        mark, style = TODO_MARKS.get(str(item.get("status")), ("☐", ""))
        done = " strike dim" if item.get("status") == "completed" else ""
        text.append(f"  {mark} ", style=style)
        text.append(f"{item.get('content', '')}\n", style=(style + done).strip())
    return text


def status_text(label: str, started: float, details: list[str], retries: RetryWatch | None) -> Text:
    """The live status line's text: `label · 12s · details · retry 1 of 2 (HTTP 500) ·
    Ctrl-C cancels` (the REPL's and the one-shot chat's, status_line.py)."""
    elapsed = int(time.monotonic() - started)
    parts = [f"{label} · {elapsed}s", *details]
    retry = retries.describe() if retries else ""
    text = Text(" · ".join(p for p in parts if p), style="dim")
    if retry:
        text.append(f" · {retry}", style="yellow")
    text.append(" · Ctrl-C cancels", style="dim")
    return text


class RichRenderer(HumanRenderer):
    def __init__(
        self,
        out: TextIO | None = None,
        err: TextIO | None = None,
        *,
        root: Path | None = None,
        console: Console | None = None,
        err_console: Console | None = None,
        live: bool = True,
        retries: RetryWatch | None = None,
    ) -> None:
        super().__init__(out, err)
        self.console = console or Console(file=self.out, highlight=False)
        self.err_console = err_console or Console(file=self.err, highlight=False)
        self.root = root
        self.live_enabled = live
        self.retries = retries
        self._spinner = Spinner("dots")
        self._live: Live | None = None
        self._answer = ""
        self._started = time.monotonic()
        self._context = ""
        self._answer_chars = 0  # every character of this turn's answer, for the token count
        self._running: dict[str, tuple[int, deque[str]]] = {}  # call id: depth, last lines
        # Calls started and not yet answered, each in the phrase book's progressive words:
        # the status line says the latest ("Running `make`") instead of "working".
        self._doing: dict[str, str] = {}
        self._asked: set[str] = set()  # tool calls a person approved (their diff was shown)
        self._before: dict[str, tuple[ToolCall, str | None]] = {}
        self._collapsed: set[str] = set()
        self._menu_shown = False  # an approval menu was the last thing drawn (see TurnEnd)

    # -- the live area ----------------------------------------------------------------
    def _status(self) -> RenderableType:
        tokens = f"~{approx_tokens(self._answer_chars):,} tokens out" if self._answer_chars else ""
        label = next(reversed(self._doing.values()), "working")
        text = status_text(label, self._started, [tokens, self._context], self.retries)
        self._spinner.update(text=text)  # one spinner, so that it turns between refreshes
        return self._spinner

    def live_view(self) -> RenderableType:
        """What the live area shows now: the answer's last lines, the status line, and the
        last lines of each running command."""
        height = max(3, self.console.size.height - 4)
        tail = "\n".join(self._answer.splitlines()[-height:])
        parts: list[RenderableType] = [Text(tail)] if tail else []
        parts.append(self._status())
        for depth, lines in self._running.values():
            for line in lines:
                parts.append(
                    Text(
                        "    " * depth + "  │ " + line,
                        style="dim",
                        no_wrap=True,
                        overflow="ellipsis",
                    )
                )
        return Group(*parts)

    def _tool_output(self, event: ToolOutput) -> None:
        _, lines = self._running.setdefault(
            event.id, (event.depth, deque(maxlen=LIVE_OUTPUT_LINES))
        )
        lines.extend(strip_terminal_control(line) for line in event.text.splitlines())

    def _start_live(self) -> None:
        if not self.live_enabled or self._live is not None:
            return
        self._live = Live(
            get_renderable=self.live_view,
            console=self.console,
            transient=True,  # the status line disappears; the answer is printed for good
            refresh_per_second=8,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._answer.strip():
            self.console.print(Markdown(self._answer, code_theme=CODE_THEME))
        self._answer = ""

    def pause(self) -> None:
        """Before anything else writes to the terminal (a prompt, a note)."""
        self._stop_live()

    # -- HumanRenderer's methods ---------------------------------------------------
    def note(self, text: str) -> None:
        self._stop_live()
        self.console.print(Text(text))

    def post_turn(self, event: Event) -> None:
        if isinstance(event, MemoryChanged):
            self.err_console.print(
                Text(f"memory: {event.scope} memory updated (batch {event.batch_id})", "dim")
            )

    def event(self, event: Event) -> None:
        if isinstance(event, TurnStart):
            self._started = time.monotonic()
            self._answer_chars = 0
            self._running.clear()
            self._doing.clear()
            if self.retries:
                self.retries.reset()
            self._start_live()
        elif isinstance(event, MessageDelta):
            self._answer += event.text
            self._answer_chars += len(event.text)
            self._start_live()
        elif isinstance(event, ToolOutput):
            self._tool_output(event)
            self._start_live()
        elif isinstance(event, ApprovalRequested):
            self._stop_live()  # a prompt follows: nothing may redraw over it
        elif isinstance(event, ContextUsage):
            self._context = f"context {event.tokens:,}/{event.limit:,} tokens"
        elif isinstance(event, (Todos, ToolCall, ToolResult, ApprovalResolved, Error)):
            self._print_event(event)
        elif isinstance(event, TurnEnd):
            self._running.clear()
            self._doing.clear()
            # The live area's last redraw clears the line the tty echoed ^C on, and the
            # approval menu (prompt_toolkit, raw mode) ends its line itself.
            line_ended = self._live is not None or self._menu_shown
            self._stop_live()
            if event.status == "cancelled":
                if not line_ended and echoes_ctrl_c(self.err):
                    self.err_console.print()  # the echoed ^C keeps its line, alone
                self.err_console.print(Text("(turn cancelled)", style="yellow"))

    def _print_event(self, event: Todos | ToolCall | ToolResult | ApprovalResolved | Error) -> None:
        """Events that print lines: the live view stops while they print (nothing may redraw
        over them), then resumes, except after an error."""
        self._stop_live()
        self._menu_shown = False
        if isinstance(event, Error):
            self.err_console.print(Text(f"error: {event.message}", style="bold red"))
            return
        if isinstance(event, Todos):
            self.console.print(todo_checklist(event.items))
        elif isinstance(event, ToolCall):
            self._tool_call(event)
        elif isinstance(event, ToolResult):
            self._tool_result(event)
        else:
            extra = f" — remembered: {event.remembered}" if event.remembered else ""
            self.console.print(Text(f"  ✓ {event.decision}{extra}", style="green"))
        self._start_live()

    def _tool_call(self, event: ToolCall) -> None:
        indent = "    " * event.depth
        line = Text(indent + "● ", style="cyan")
        line.append(event.summary or event.name, style="bold cyan")
        self.console.print(line)
        self._doing[event.id] = event.words.progressive
        if event.name in WRITES_FILES:
            # Kept to show what changed if a rule (not a person) approves the write.
            self._before[event.id] = (event, self._read(event.args.get("path")))

    def _read(self, path: object) -> str | None:
        if self.root is None or not isinstance(path, str):
            return None
        target = (self.root / path).resolve()
        if not target.is_relative_to(self.root.resolve()):
            return None
        try:
            return target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def _tool_result(self, event: ToolResult) -> None:
        self._running.pop(event.id, None)  # its live lines go; /expand has the output
        self._doing.pop(event.id, None)
        self.results.append(event)
        number = len(self.results)
        indent = "    " * event.depth
        mark = {"success": "⎿", "error": "⎿ error:", "rejected": "⎿ rejected:"}[event.status]
        style = {"success": "", "error": "red", "rejected": "yellow"}[event.status]
        line = Text(f"{indent}  {mark} ", style=style)
        counted = _COUNTED.fullmatch(event.summary)
        if counted:
            line.append(counted["head"])
            line.append(f" (+{counted['more']}, /expand {number})", style="dim")
            line.append(counted["status"] or "")
        else:
            line.append(event.summary)
        self.console.print(line)
        call, before = self._before.pop(event.id, (None, None))
        if call is not None and event.status == "success" and event.id not in self._asked:
            self._rule_approved_diff(call, before, indent)

    def _rule_approved_diff(self, call: ToolCall, before: str | None, indent: str) -> None:
        """A write no one was asked about (a session/workspace rule allowed it): still show
        what changed, shortly."""
        path = str(call.args.get("path", ""))
        if call.name == "edit_file":
            old = str(call.args.get("old_string", ""))
            new = str(call.args.get("new_string", ""))
        else:
            old, new = before or "", str(call.args.get("content", ""))
        diff = "".join(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                f"a/{path}",
                f"b/{path}",
                n=1,
            )
        )
        if not diff:
            return
        body = "\n".join(diff.splitlines()[2:])  # the ---/+++ header adds nothing here
        text, left_out = diff_text(body, RULE_DIFF_LINES)
        self.console.print(Text(f"{indent}    {path} ({diff_summary(body)}):", style="dim"))
        self.console.print(text, end="")
        if left_out:
            self.console.print(Text(f"{indent}    … {left_out} more lines", style="dim"))

    # -- approvals ------------------------------------------------------------------
    def approval(self, request: ApprovalRequested) -> None:
        self._stop_live()
        self._menu_shown = True
        if request.tool_call_id:
            self._asked.add(request.tool_call_id)
        self.console.print(Text(f"⚠ Approval needed: {request.description}", style="bold yellow"))
        if request.diff:
            text, left_out = diff_text(request.diff, DIFF_HEAD_LINES)
            self.console.print(text, end="")
            if left_out:
                self._collapsed.add(request.approval_id)
                self.console.print(
                    Text(
                        f"    … {left_out} more lines ({diff_summary(request.diff)} in all)"
                        " — [d] shows the whole diff",
                        style="dim",
                    )
                )
        elif request.tool_name != "execute":
            args = json.dumps(request.args, ensure_ascii=False)[:500]
            self.console.print(Text(f"    args: {args}", style="dim"))

    def diff_collapsed(self, request: ApprovalRequested) -> bool:
        return request.approval_id in self._collapsed

    def full_diff(self, request: ApprovalRequested) -> None:
        text, _ = diff_text(request.diff or "")
        self.console.print(text, end="")

    def expand(self, number: int | None) -> None:
        self._stop_live()
        super().expand(number)
