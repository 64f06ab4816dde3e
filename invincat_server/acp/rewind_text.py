"""What the ACP `/rewind` command reads and says: its arguments, and the Markdown of the
turns, the plan and the result (acp/rewind.py holds the dialogue).

Only translation of the core's answers (runtime/checkpoints/rewind.py's `Rewinder`): the
turns, the per-file plan and diff, what was restored or kept are the core's; here they
become agent message text. Diffs are cut so one huge file cannot flood the client.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from invincat_server.runtime.wording import plural

if TYPE_CHECKING:
    from invincat_server.runtime.checkpoints.planning import RewindPlan
    from invincat_server.runtime.checkpoints.restore import RestoreResult
    from invincat_server.runtime.checkpoints.rewind import ThreadCheckpoints

DESCRIPTION = "Go back to before an earlier turn: files, conversation or both (asks first)"
HINT = "turn number, then code|conversation|both"
SCOPES = ("code", "conversation", "both")
USAGE = (
    "Usage: `/rewind` lists this session's turns; `/rewind N [code|conversation|both]` "
    "goes back to before turn N (`code`, the default, restores the files; `conversation` "
    "makes the thread forget turn N and later ones; `both` does both). Nothing was changed."
)
NO_TURNS = "Nothing to rewind: this session has no turns yet."
NOT_REWOUND = "Not rewound: nothing was changed."
DIFF_LINES = 200
"""Lines of one file's diff shown; the rest is counted, not shown."""


@dataclass(frozen=True)
class RewindRequest:
    to_turn: int
    scope: str


class BadArguments(ValueError):
    """The arguments are not a rewind; the message says what is expected."""


def parse(arg: str) -> RewindRequest | None:
    """`/rewind ARG`: None to list the turns, else the turn and scope (code by default).
    Raises BadArguments with the usage for anything else."""
    words = arg.split()
    if not words:
        return None
    if len(words) > 2 or not words[0].isdigit() or len(words[0]) > 9:
        raise BadArguments(f"`{_cut(arg)}` is not a turn and a scope. {USAGE}")
    scope = words[1].lower() if len(words) == 2 else "code"
    if scope not in SCOPES:
        raise BadArguments(f"`{_cut(words[1])}` is not code, conversation or both. {USAGE}")
    return RewindRequest(int(words[0]), scope)


def _cut(text: str, limit: int = 60) -> str:
    """The user's words echoed on one line: no control characters, no backticks."""
    line = " ".join(re.sub(r"[\x00-\x1f\x7f]", " ", text).split()).replace("`", "'")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _code(text: str) -> str:
    """Inline code that survives backticks in the text (a path may hold one)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fenced(text: str, language: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def out_of_range(count: int) -> str:
    if not count:
        return NO_TURNS
    return (
        f"This session has {plural(count, 'turn')}; choose a turn from 1 to {count}. "
        "Nothing was changed."
    )


def turns_text(found: ThreadCheckpoints) -> str:
    if not found.turns:
        return NO_TURNS
    lines = [
        f"This session has {plural(len(found.turns), 'turn')} "
        "(`/rewind N [code|conversation|both]` goes back to before turn N):"
    ]
    for turn in found.turns:
        changed = ", ".join(_code(path) for path in turn.files) or "no files changed"
        lines.append(f"{turn.number}. {_cut(turn.prompt, 80)} — {changed}")
    if found.rewinds:
        lines.append(
            f"({plural(len(found.rewinds), 'rewind')} so far; "
            f"`invincat rewind {found.thread_id} --undo` puts the files back as they were "
            "before the last one.)"
        )
    lines.extend(f"Note: {problem}" for problem in found.problems)
    return "\n".join(lines)


def _diff(text: str) -> str:
    lines = text.splitlines()
    if len(lines) > DIFF_LINES:
        more = len(lines) - DIFF_LINES
        lines = [*lines[:DIFF_LINES], f"… ({plural(more, 'more line')} not shown)"]
    return _fenced("\n".join(lines), "diff")


def what_changes(request: RewindRequest, plan: RewindPlan | None) -> str:
    """The plan as agent text, before the permission request."""
    forget = f"the thread forgets turn {request.to_turn} and every later one"
    if plan is None:
        return f"Rewinding the conversation: {forget} (this cannot be undone)."
    head = f"Rewinding the files to before turn {request.to_turn}"
    if not plan.files:
        lines = [f"{head}: no file differs from that point."]
    else:
        lines = [f"{head}: {plural(len(plan.files), 'file')} would change:"]
        note = " (changed since Invincat wrote it: kept unless you confirm it)"
        for entry in plan.files:
            hand = note if entry.path in plan.conflicts else ""
            lines.append(f"- {entry.action} {_code(entry.path)}{hand}")
        for entry in plan.files:
            if entry.problem:
                lines.append(f"{_code(entry.path)} cannot be restored: {entry.problem}")
            elif entry.diff:
                lines.append(_diff(entry.diff))
    if request.scope == "both":
        lines.append(f"Then {forget} (this cannot be undone).")
    lines.extend(f"Note: {problem}" for problem in plan.problems)
    return "\n".join(lines)


def rewind_option(request: RewindRequest, plan: RewindPlan | None) -> str:
    """The name of the permission option that rewinds."""
    parts = []
    if plan is not None and plan.files:
        parts.append(f"restore {plural(len(plan.files), 'file')}")
    if request.scope != "code":
        parts.append(f"forget turn {request.to_turn} and later ones")
    return "Rewind: " + " and ".join(parts)


def result_text(
    thread_id: str, result: RestoreResult | None, removed: int | None, refused: str | None
) -> str:
    """What was restored, kept, failed; what the conversation forgot (or why not)."""
    lines = []
    if result is not None:
        restored = ", ".join(_code(path) for path in result.restored)
        count = plural(len(result.restored), "file")
        lines.append(f"Restored {count}: {restored}." if restored else f"Restored {count}.")
        for path in result.skipped:
            lines.append(
                f"Kept {_code(path)}: it changed since Invincat wrote it and was not confirmed."
            )
        for path, why in result.failed.items():
            lines.append(f"Could not restore {_code(path)}: {why}")
        if result.checkpoint is not None:
            lines.append(f"Undo it with `invincat rewind {thread_id} --undo`.")
    if removed is not None:
        lines.append(f"The thread forgot those turns ({plural(removed, 'message')}).")
    if refused is not None:
        lines.append(f"The conversation was not rewound: {refused}")
    return "\n".join(lines) or "No file differs from that point any more: nothing was changed."
