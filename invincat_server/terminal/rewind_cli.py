"""`invincat rewind THREAD [--to TURN | --undo] [--code|--conversation|--both] [--yes]
[--json]` and the text the REPL's `/rewind` shows, over runtime/checkpoints/rewind.py.

Without `--to` it lists the thread's turns and what each changed. With it, it shows the
plan (a unified diff per file) and asks on a terminal; without a terminal it refuses
unless `--yes`. A file changed since Invincat last wrote it is overwritten only when the
user names it: asked about by name on a terminal, or `--overwrite PATH` with `--yes`.
The code part needs no agent stack; the conversation part opens the project's Session.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.wording import plural
from invincat_server.terminal.confirm import confirm
from invincat_server.terminal.printable import printable, printable_lines

if TYPE_CHECKING:
    from invincat_server.runtime.checkpoints.planning import RewindPlan
    from invincat_server.runtime.checkpoints.restore import RestoreResult
    from invincat_server.runtime.checkpoints.rewind import ThreadCheckpoints
    from invincat_server.runtime.config import Settings

EXIT_OK, EXIT_FAILED = 0, 1
SCOPES = ("code", "conversation", "both")


def add_rewind_parser(sub: argparse._SubParsersAction) -> None:
    rewind = sub.add_parser(
        "rewind", help="undo a thread's turns: files, conversation or both (asks first)"
    )
    rewind.add_argument("thread_id", metavar="THREAD", help="the thread's id (`threads list`)")
    target = rewind.add_mutually_exclusive_group()
    target.add_argument(
        "--to", type=_turn, metavar="TURN", help="go back to before turn TURN (1 = the first)"
    )
    target.add_argument("--undo", action="store_true", help="undo the thread's last rewind")
    scope = rewind.add_mutually_exclusive_group()
    for name in SCOPES:
        scope.add_argument(
            f"--{name}",
            dest="scope",
            action="store_const",
            const=name,
            help={
                "code": "restore the files only (the default)",
                "conversation": "make the thread forget the turns only",
                "both": "restore the files and make the thread forget the turns",
            }[name],
        )
    rewind.add_argument("--yes", action="store_true", help="do not ask (for scripts)")
    rewind.add_argument(
        "--overwrite",
        action="append",
        default=[],
        metavar="PATH",
        help="with --yes: also restore PATH though it changed since Invincat wrote it",
    )
    rewind.add_argument("--json", action="store_true", help="one JSON event per line")


def _turn(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a turn number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("turns are numbered from 1")
    return value


# ------------------------------------------------------------------ text for people


# Paths, prompts, diffs and messages come from the repository and the model: every piece
# is shown through printable(), so an escape sequence in a file name never reaches the
# terminal (docs/security.md).


def describe_turns(found: ThreadCheckpoints) -> str:
    lines = [f"Thread {printable(found.thread_id)}: {plural(len(found.turns), 'turn')}."]
    for turn in found.turns:
        changed = ", ".join(map(printable, turn.files)) if turn.files else "no files changed"
        lines.append(f"  {turn.number:>3}. {printable(turn.prompt)}  [{changed}]")
    if found.rewinds:
        lines.append(f"  ({plural(len(found.rewinds), 'rewind')}; the last can be undone)")
    lines.extend(f"invincat: {printable(problem)}" for problem in found.problems)
    return "\n".join(lines)


def describe_plan(plan: RewindPlan) -> str:
    if not plan.files:
        return "No file differs from that point: nothing to restore."
    lines = [f"{plural(len(plan.files), 'file')} would change:"]
    for entry in plan.files:
        note = "  (changed since Invincat wrote it)" if entry.changed_by_hand else ""
        lines.append(f"  {entry.action:<6} {printable(entry.path)}{note}")
    for entry in plan.files:
        if entry.problem:
            lines.append(f"invincat: {printable(entry.path)}: {printable(entry.problem)}")
        elif entry.diff:
            lines.append(printable_lines(entry.diff.rstrip("\n")))
    lines.extend(f"invincat: {printable(problem)}" for problem in plan.problems)
    return "\n".join(lines)


def describe_result(result: RestoreResult, thread_id: str) -> str:
    lines = [f"Restored {plural(len(result.restored), 'file')}."]
    if result.checkpoint is not None:
        lines[0] += f" Undo it with `invincat rewind {printable(thread_id)} --undo`."
    for path in result.skipped:
        lines.append(
            f"Kept {printable(path)}: it changed since Invincat wrote it and was not confirmed."
        )
    for path, why in result.failed.items():
        lines.append(f"invincat: could not restore {printable(path)}: {printable(why)}")
    return "\n".join(lines)


def overwrite_question(path: str) -> str:
    return f"{printable(path)} changed since Invincat wrote it; overwrite it?"


def choose_overwrites(plan: RewindPlan, ask: Any = confirm) -> set[str]:
    """Ask by name about each file changed since Invincat wrote it."""
    return {path for path in plan.conflicts if ask(overwrite_question(path))}


# ------------------------------------------------------------------ the command


def run_rewind_command(settings: Settings, args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(settings, args))


def _emit(as_json: bool, event: dict[str, Any], text: str) -> None:
    print(json.dumps(event) if as_json else text, flush=True)


def _fail(as_json: bool, message: str) -> int:
    if as_json:
        print(json.dumps({"type": "error", "message": message}), flush=True)
    else:
        print(f"invincat: {printable(message)}", file=sys.stderr)
    return EXIT_FAILED


async def _run(settings: Settings, args: argparse.Namespace) -> int:
    from invincat_server.runtime.checkpoints.rewind import Rewinder
    from invincat_server.runtime.checkpoints.store import CheckpointError
    from invincat_server.runtime.errors import SessionError
    from invincat_server.runtime.thread_store import read_saved

    as_json, scope = args.json, args.scope or "code"
    threads, _ = read_saved(settings, None)
    info = next((t for t in threads if t.thread_id == args.thread_id), None)
    if info is None:
        return _fail(
            as_json,
            f"Unknown thread {args.thread_id!r}; list threads with `invincat threads list`.",
        )
    rewinder = Rewinder(settings, Path(info.workspace))
    try:
        if args.to is None and not args.undo:
            found = rewinder.checkpoints(info.thread_id)
            event = {
                "type": "rewind_turns",
                "thread_id": info.thread_id,
                "turns": [t.to_json() for t in found.turns],
                "rewinds": found.rewinds,
                "problems": found.problems,
            }
            _emit(as_json, event, describe_turns(found))
            return EXIT_OK
        if args.undo and scope != "code":
            return _fail(as_json, "--undo restores files only; the conversation is not kept.")
        rewinder.ensure_quiet(info.thread_id)  # a busy thread: refused before any plan
        plan = (
            rewinder.plan_undo(info.thread_id)
            if args.undo
            else rewinder.plan_to(info.thread_id, args.to)
        )
    except (CheckpointError, SessionError) as exc:
        return _fail(as_json, str(exc))
    code = scope in ("code", "both")
    _show_plan(as_json, info.thread_id, args, scope, plan if code else None)
    confirmed = set(args.overwrite)
    if not args.yes:
        if not sys.stdin.isatty():
            return _fail(as_json, "No terminal to ask; nothing changed. Repeat with --yes.")
        if not confirm("Rewind?"):
            return _fail(as_json, "Not rewound; nothing changed.")
        if code:
            confirmed |= choose_overwrites(plan)
    try:
        result = rewinder.restore(plan, confirmed) if code else None
    except SessionError as exc:  # an approval began waiting while we asked
        return _fail(as_json, str(exc))
    removed = None
    if scope in ("conversation", "both"):
        try:
            removed = await _forget(settings, Path(info.workspace), info.thread_id, args.to)
        except Exception as exc:  # ConfigError, SessionError: said, not a traceback
            _report(as_json, result, None, info.thread_id)
            return _fail(as_json, f"The conversation was not rewound: {exc}")
    _report(as_json, result, removed, info.thread_id)
    return EXIT_FAILED if result is not None and result.failed else EXIT_OK


def _show_plan(
    as_json: bool, thread_id: str, args: argparse.Namespace, scope: str, plan: RewindPlan | None
) -> None:
    """The `rewind_plan` event; `plan` None: the conversation only, no file changes."""
    event = {
        "type": "rewind_plan",
        "thread_id": thread_id,
        "to_turn": args.to,
        "undo": args.undo if plan is not None else False,
        "scope": scope,
        "files": [f.to_json() for f in plan.files] if plan is not None else [],
        "conflicts": plan.conflicts if plan is not None else [],
        "problems": plan.problems if plan is not None else [],
    }
    text = (
        describe_plan(plan)
        if plan is not None
        else f"Thread {printable(thread_id)} would forget turn {args.to} and every later turn."
    )
    _emit(as_json, event, text)


def _report(
    as_json: bool, result: RestoreResult | None, removed: int | None, thread_id: str
) -> None:
    event = {
        "type": "rewind_done",
        "restored": result.restored if result else [],
        "skipped": result.skipped if result else [],
        "failed": result.failed if result else {},
        "checkpoint": result.checkpoint if result else None,
        "conversation_removed": removed,
    }
    text = describe_result(result, thread_id) if result is not None else ""
    if removed is not None:
        text = (text + "\n" if text else "") + (f"The thread forgot {plural(removed, 'message')}.")
    _emit(as_json, event, text)


async def _forget(settings: Settings, root: Path, thread_id: str, to_turn: int) -> int:
    import asyncio  # here, not at the top: `invincat --help` and `--version` load no asyncio

    from invincat_server.runtime.memory.backend import open_service
    from invincat_server.runtime.policy.workspace import Workspace
    from invincat_server.runtime.session import Session

    # The memory backend the settings choose (the database with `database_url`), as the
    # Project gives every other front end's Session.
    memory = await asyncio.to_thread(open_service, settings.home, root, settings.database_url)
    async with Session(settings, Workspace(root), memory=memory) as session:
        return await session.rewind_conversation(thread_id, to_turn)
