"""The one short human line shown for a tool call and its result ("Read src/app.py",
"Run `pytest -q`", "Wrote 1 line to notes.txt (+2 lines)"). Computed once here and sent as
the `summary` field of `tool_call` / `tool_result`, so the terminal, VS Code and Neovim
show the same words. Pure functions: no LangChain, no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

from invincat_server.runtime.wording import plural

MAX_CALL_SUMMARY = 80
MAX_RESULT_HEAD = 100
_SPACE = re.compile(r"\s+")
_EXIT_STATUS = re.compile(r"\[exit code: [^\]]*\]")  # the last line of `execute`'s result

# Tool -> verb for tools that act on one path.
_PATH_VERBS = {"read_file": "Read", "write_file": "Write", "edit_file": "Edit", "ls": "List"}
# Tool -> verb for tools that take a pattern and an optional directory.
_PATTERN_VERBS = {"glob": "Find", "grep": "Search"}


def _one_line(text: str, limit: int) -> str:
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _items(count: int) -> str:
    return plural(count, "item")


def _subject(name: str, args: dict[str, Any]) -> str:
    if name in _PATH_VERBS:
        path = _text(args.get("path")) or ("." if name == "ls" else "")
        return f"{_PATH_VERBS[name]} {path}".rstrip()
    if name in _PATTERN_VERBS:
        pattern, where = _text(args.get("pattern")) or "", _text(args.get("path"))
        return f"{_PATTERN_VERBS[name]} {pattern}" + (f" in {where}" if where else "")
    if name == "execute":
        return f"Run `{args.get('command', '')}`"
    if name == "web_fetch":
        return f"Fetch {args.get('url', '')}"
    if name == "task":
        return f"Task: {args.get('description', '')}"
    if name in ("write_todos", "approve_plan"):
        todos = args.get("todos")
        label = "Plan" if name == "approve_plan" else "Todos"
        return f"{label}: {_items(len(todos) if isinstance(todos, list) else 0)}"
    first = next((v for v in args.values() if _text(v)), None)
    if first is not None:
        return f"{name} {first}"
    return f"{name} {json.dumps(args, ensure_ascii=False)}" if args else name


def call_summary(name: str, args: dict[str, Any]) -> str:
    """What a tool call does, in at most MAX_CALL_SUMMARY characters on one line."""
    return _one_line(_subject(name, args if isinstance(args, dict) else {}), MAX_CALL_SUMMARY)


def result_summary(content: str) -> str:
    """A result's first line (cut at MAX_RESULT_HEAD) and how many lines follow."""
    lines = content.strip().splitlines() or [""]
    # A command's closing `[exit code: N]` is said after the count, not counted as output:
    # "(no output) [exit code: 0]", not "(no output) (+1 lines)".
    status = lines.pop() if len(lines) > 1 and _EXIT_STATUS.fullmatch(lines[-1]) else ""
    more = f" (+{plural(len(lines) - 1, 'line')})" if len(lines) > 1 else ""
    return lines[0][:MAX_RESULT_HEAD] + more + (f" {status}" if status else "")
