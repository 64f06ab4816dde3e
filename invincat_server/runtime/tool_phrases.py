"""The phrase book: how every front end words a tool call.

One place says what a call does — its title ("Write src/app.py", "Run `pytest -q`",
"Search for `foo` in src"), the same in the present progressive for a front end that
shows what is going on now ("Writing src/app.py": the one-shot status line, the language
server's `$/progress`), and its kind in ACP's ToolKind vocabulary (read, edit, execute,
search, fetch, think, other). The core words each call once, where its event is made
(runtime/events.py: `ToolCall.words`, `ApprovalRequested.words`; the title is also the
event's `summary`) and thread history (runtime/history.py: `summary`); front ends read
those, never word a call again.

The arguments come from the model (or a saved thread, or an editor's edit), so anything
may be in them: a value of the wrong type or none counts as missing, control characters
(NUL, ESC: a title is printed to terminals) become spaces, long values are cut. Titles
are kept and shown where the arguments are not (scrollback, client logs, progress
bars), so each value is redacted before it is cut (runtime/memory/redaction.py, as thread
titles are): a pasted key reads `[REDACTED:…]`. Pure functions; none raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from invincat_server.runtime.wording import plural

ToolKind = Literal["read", "edit", "execute", "search", "fetch", "think", "other"]

MAX_PHRASE_CHARS = 80
"""A title or progressive phrase is one line of at most this many characters."""
VALUE_CHARS = 60  # a path, command or URL inside a phrase
SHORT_VALUE_CHARS = 30  # a second value beside the first (a search's folder, a skill file)
NAME_CHARS = 40  # a tool's name (an MCP server's tools are named by the server)
CUT = "…"

# Control characters (C0 with NUL, DEL, C1): they would move a terminal's cursor.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Phrase:
    title: str
    """What the call does: "Write src/app.py"."""
    progressive: str
    """The same while it happens: "Writing src/app.py"."""
    kind: ToolKind


def phrase(name: object, args: object) -> Phrase:
    """The words for a call of tool `name` with `args` (any values: see the module)."""
    fields: Mapping[str, Any] = args if isinstance(args, Mapping) else {}
    tool = name if isinstance(name, str) else ""
    words = _WORDS.get(tool)
    if tool == "execute" and fields.get("unsandboxed") is True:
        words = _UNSANDBOXED  # leaving the sandbox is said wherever the call is named
    if words is None:
        return _generic(tool, fields)
    subject = words.subject(fields)
    return Phrase(
        title=_fit(f"{words.verb} {subject}"),
        progressive=_fit(f"{words.doing} {subject}"),
        kind=words.kind,
    )


def tool_kind(name: object) -> ToolKind:
    """The kind of tool `name`'s calls ("other" for a tool the book does not know),
    whatever the arguments: for a saved call that history worded without its kind (ACP
    replays it after `session/load`)."""
    words = _WORDS.get(name) if isinstance(name, str) else None
    return words.kind if words is not None else "other"


# -- values ----------------------------------------------------------------------------
def shown(value: object, limit: int = VALUE_CHARS) -> str | None:
    """`value` as it may stand in a phrase: on one line, redacted, cut to `limit`; None
    when it is not a string or holds nothing to show."""
    # Imported on first use: the redaction rules are compiled regexes, and the light
    # readers (thread history before the agent stack) import this module early.
    from invincat_server.runtime.memory.redaction import (
        cut_redacted,
        redact_and_cut,
        window_for_cut,
    )

    if not isinstance(value, str):
        return None
    # Only the start of a huge value is looked at (up to a word boundary past 8x the
    # limit, so no secret is cut in half before redaction sees it whole).
    window = window_for_cut(value, limit)
    flat = " ".join(_CONTROL.sub(" ", window).split())
    if not flat:
        return None
    text = redact_and_cut(flat, limit, marker=CUT)
    if len(window) < len(value) and not text.endswith(CUT):
        text = cut_redacted(text + " " + CUT, limit, marker=CUT)  # still a cut: say so
    return text


def _fit(text: str) -> str:
    from invincat_server.runtime.memory.redaction import cut_redacted

    # The parts are redacted already; this only keeps a placeholder whole.
    return cut_redacted(text.strip(), MAX_PHRASE_CHARS, marker=CUT)


def _todos(what: str, word: str) -> Callable[[Mapping[str, Any]], str]:
    def subject(args: Mapping[str, Any]) -> str:
        todos = args.get("todos")
        return f"{what} ({plural(len(todos), word)})" if isinstance(todos, list) else what

    return subject


# -- subjects: what each tool acts on ---------------------------------------------------
def _path(missing: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda args: shown(args.get("path")) or missing


def _where(args: Mapping[str, Any]) -> str:
    folder = shown(args.get("path"), SHORT_VALUE_CHARS)
    return f" in {folder}" if folder and folder != "." else ""


def _glob(args: Mapping[str, Any]) -> str:
    pattern = shown(args.get("pattern"), SHORT_VALUE_CHARS)
    return (f"files matching `{pattern}`" if pattern else "files") + _where(args)


def _grep(args: Mapping[str, Any]) -> str:
    pattern = shown(args.get("pattern"), SHORT_VALUE_CHARS)
    return (f"for `{pattern}`" if pattern else "files") + _where(args)


def _command(args: Mapping[str, Any]) -> str:
    command = shown(args.get("command"), MAX_PHRASE_CHARS)
    return f"`{command}`" if command else "a command"


def _subagent(args: Mapping[str, Any]) -> str:
    kind = shown(args.get("subagent_type"), 20)
    task = shown(args.get("description"))
    return f"{kind or 'a'} subagent" + (f": {task}" if task else "")


def _questions(args: Mapping[str, Any]) -> str:
    questions = args.get("questions")
    count = len(questions) if isinstance(questions, list) else 1
    return "you a question" if count <= 1 else f"you {count} questions"


def _skill(args: Mapping[str, Any]) -> str:
    skill = shown(args.get("name"), SHORT_VALUE_CHARS)
    file = shown(args.get("file"), SHORT_VALUE_CHARS)
    return (f"skill `{skill}`" if skill else "a skill") + (f": {file}" if file else "")


def _memory_query(args: Mapping[str, Any]) -> str:
    query = shown(args.get("query"))
    return f"memory for `{query}`" if query else "memory"


def _remote_start(args: Mapping[str, Any]) -> str:
    agent = shown(args.get("agent"), SHORT_VALUE_CHARS)
    task = shown(args.get("task"))
    return f"a remote task on {agent or 'a remote agent'}" + (f": {task}" if task else "")


def _remote_task(prefix: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda args: f"{prefix}remote task {shown(args.get('task_id'), 40) or ''}".rstrip()


@dataclass(frozen=True)
class _Words:
    verb: str
    doing: str
    kind: ToolKind
    subject: Callable[[Mapping[str, Any]], str]


_WORDS: dict[str, _Words] = {
    "read_file": _Words("Read", "Reading", "read", _path("a file")),
    "write_file": _Words("Write", "Writing", "edit", _path("a file")),
    "edit_file": _Words("Edit", "Editing", "edit", _path("a file")),
    "ls": _Words("List", "Listing", "search", _path(".")),
    "glob": _Words("Find", "Finding", "search", _glob),
    "grep": _Words("Search", "Searching", "search", _grep),
    "execute": _Words("Run", "Running", "execute", _command),
    "web_fetch": _Words("Fetch", "Fetching", "fetch", lambda a: shown(a.get("url")) or "a page"),
    "task": _Words("Start", "Running", "other", _subagent),
    "write_todos": _Words("Update", "Updating", "think", _todos("the todo list", "item")),
    "approve_plan": _Words("Propose", "Proposing", "think", _todos("a plan", "step")),
    "ask_user": _Words("Ask", "Asking", "other", _questions),
    "load_skill": _Words("Load", "Loading", "read", _skill),
    "search_memory": _Words("Search", "Searching", "search", _memory_query),
    "remote_task_start": _Words("Start", "Starting", "other", _remote_start),
    "remote_task_status": _Words("Check", "Checking", "other", _remote_task("")),
    "remote_task_result": _Words("Get", "Getting", "other", _remote_task("the result of ")),
    "remote_task_cancel": _Words("Cancel", "Cancelling", "other", _remote_task("")),
}
_UNSANDBOXED = _Words(
    "Run WITHOUT the sandbox:", "Running WITHOUT the sandbox:", "execute", _command
)


def _argument(item: tuple[object, object]) -> str | None:
    """One argument's value as shown, redacted as if beside its name: alone, `hunter2` is
    no secret to the rules, but `api_key: hunter2` is (then the labelled form is shown)."""
    from invincat_server.runtime.memory.redaction import PLACEHOLDER

    key, value = item
    plain = shown(value)
    if plain is None or not isinstance(key, str):
        return plain
    labelled = shown(f"{key}: {value}", NAME_CHARS + VALUE_CHARS)
    redacted = PLACEHOLDER.partition("{")[0]  # how every placeholder starts: "[REDACTED:"
    if labelled is not None and labelled.count(redacted) > plain.count(redacted):
        return labelled
    return plain


def _generic(tool: str, args: Mapping[str, Any]) -> Phrase:
    """A tool the book does not know (an MCP server's, say): its name and its first text
    argument, else its arguments as JSON."""
    name = shown(tool, NAME_CHARS) or "a tool"
    first = next((text for text in map(_argument, args.items()) if text), None)
    if first is None and args:
        try:
            first = shown(json.dumps(dict(args), ensure_ascii=False, default=repr))
        except (ValueError, TypeError, RecursionError):  # a cycle, nesting too deep
            first = None
    detail = f" {first}" if first else ""
    return Phrase(
        title=_fit(f"{name}{detail}"), progressive=_fit(f"Calling {name}{detail}"), kind="other"
    )
