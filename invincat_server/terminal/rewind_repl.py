"""The REPL's `/rewind`: the thread's turns, pick one, see the diff, then choose code,
conversation or both — each question answered in the REPL's own input (Enter cancels).

Only whole answers count: a word that merely starts like one ("cancel", "villain") is
not understood and rewinds nothing. `ask` drops what was typed before each question was
shown (app.py), so a line typed ahead never picks a turn or a scope.

The core does the work (runtime/checkpoints/rewind.py, `Session.rewind_conversation`);
the text is rewind_cli.py's, so the REPL and `invincat rewind` say the same things.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from invincat_server.runtime.checkpoints.planning import RewindPlan
from invincat_server.runtime.checkpoints.rewind import Rewinder
from invincat_server.runtime.checkpoints.store import CheckpointError
from invincat_server.runtime.errors import SessionError
from invincat_server.runtime.session import Session
from invincat_server.terminal.printable import printable
from invincat_server.terminal.rewind_cli import (
    describe_plan,
    describe_result,
    describe_turns,
    overwrite_question,
)

Ask = Callable[[str], Awaitable[str | None]]
Say = Callable[[str], None]
CHOICES = {
    "c": "code",
    "code": "code",
    "v": "conversation",
    "conversation": "conversation",
    "b": "both",
    "both": "both",
}


def scope_of(answer: str) -> str | None:
    """The scope a whole answer names (case and surrounding spaces aside), else None."""
    return CHOICES.get(answer.strip().lower())


async def repl_rewind(session: Session, thread_id: str | None, ask: Ask, say: Say) -> None:
    if thread_id is None:
        say("Nothing to rewind: this thread has no turns yet.")
        return
    rewinder = session.rewinder()
    try:
        found = await asyncio.to_thread(rewinder.checkpoints, thread_id)
        say(describe_turns(found))
        if found.turns:
            await asyncio.to_thread(rewinder.ensure_quiet, thread_id)
    except (CheckpointError, SessionError) as exc:
        say(printable(str(exc)))
        return
    if not found.turns:
        return
    to_turn = await _ask_turn(len(found.turns), ask, say)
    if to_turn is None:
        return
    plan = await asyncio.to_thread(rewinder.plan_to, thread_id, to_turn)
    say(describe_plan(plan))
    scope = await _ask_scope(ask, say)
    if scope is None:
        return
    if scope != "conversation" and not await _restore_code(rewinder, plan, ask, say):
        return
    if scope != "code":
        try:
            removed = await session.rewind_conversation(thread_id, to_turn)
        except SessionError as exc:
            say(f"The conversation was not rewound: {printable(str(exc))}")
            return
        say(f"The thread forgot turn {to_turn} and later ones ({removed} messages).")


async def _ask_turn(count: int, ask: Ask, say: Say) -> int | None:
    answer = (
        (await ask(f"Rewind to before which turn (1-{count}, Enter cancels)? ")) or ""
    ).strip()
    if not answer:
        say("Not rewound.")
        return None
    if not (answer.isascii() and answer.isdigit()) or not 1 <= int(answer) <= count:
        say(f"{answer!r} is not a turn of this thread; not rewound.")
        return None
    return int(answer)


async def _ask_scope(ask: Ask, say: Say) -> str | None:
    choice = (
        (await ask("Restore [c]ode, con[v]ersation or [b]oth (Enter cancels)? ")) or ""
    ).strip()
    if not choice:
        say("Not rewound.")
        return None
    scope = scope_of(choice)
    if scope is None:
        say(f"{choice!r} is not understood (c/code, v/conversation or b/both); not rewound.")
    return scope


async def _restore_code(rewinder: Rewinder, plan: RewindPlan, ask: Ask, say: Say) -> bool:
    """Ask about each file changed by hand, then restore; False when refused."""
    confirmed = set()
    for path in plan.conflicts:
        reply = await ask(overwrite_question(path) + " [y/N] ")
        if (reply or "").strip().lower() in ("y", "yes"):
            confirmed.add(path)
    try:
        result = await asyncio.to_thread(rewinder.restore, plan, confirmed)
    except SessionError as exc:  # the thread got busy meanwhile
        say(printable(str(exc)))
        return False
    say(describe_result(result, plan.thread_id))
    return True
