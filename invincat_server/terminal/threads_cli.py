"""`invincat threads list`, `invincat threads delete ID` and `invincat threads prune`.

No agent stack, no model: this is bookkeeping. Listing goes through the core's light
reader (`records.saved_threads`); delete and prune work on threads.sqlite's records.
Both ask before deleting (`--yes` skips the question, for scripts). A thread with
approvals waiting for a decision is never deleted silently: the user is told and asked
separately, and with `--yes` it is kept unless `--discard-pending` is given too.
A turn running in another process right now is not visible from here; the editor's
`invincat/threads/delete` (which runs inside the server that owns the turns) refuses those.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from invincat_server.runtime.wording import plural
from invincat_server.terminal.confirm import confirm

if TYPE_CHECKING:
    # Loaded only when a threads command runs: `invincat --help` builds this parser too.
    from invincat_server.runtime.config import Settings
    from invincat_server.runtime.records import ApprovalRecord, Records, ThreadInfo

EXIT_OK, EXIT_FAILED = 0, 1


def add_threads_subcommands(threads_sub: argparse._SubParsersAction) -> None:
    listing = threads_sub.add_parser("list", help="list saved threads, newest first")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.add_argument(
        "--here", action="store_true", help="only the threads of the project you are in"
    )
    delete = threads_sub.add_parser("delete", help="delete one saved thread (asks first)")
    delete.add_argument("thread_id", metavar="ID", help="the thread's id (see `threads list`)")
    prune = threads_sub.add_parser(
        "prune", help="delete threads not used for DAYS days (asks first)"
    )
    prune.add_argument(
        "--older-than", type=_days, required=True, metavar="DAYS", help="age in days (0 or more)"
    )
    for parser in (delete, prune):
        parser.add_argument("--yes", action="store_true", help="do not ask (for scripts)")
        parser.add_argument(
            "--discard-pending",
            action="store_true",
            help="with --yes: also delete threads whose approvals still wait for a decision",
        )


def _days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not 0 <= value <= 100_000:  # also refuses NaN and infinity
        raise argparse.ArgumentTypeError(f"{text!r}: the number of days must be 0 to 100000")
    return value


def run_threads_command(settings: Settings, args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(settings, args))


async def _run(settings: Settings, args: argparse.Namespace) -> int:
    from invincat_server.runtime.records import Records

    if args.threads_command == "list":
        return await _list(settings, args.json, here=args.here)
    if not settings.threads_db.exists():
        if args.threads_command == "delete":
            return _unknown(args.thread_id)
        print("No saved threads.")
        return EXIT_OK
    records = await Records.open(settings.threads_db)
    try:
        if args.threads_command == "delete":
            return await _delete(records, args)
        return await _prune(records, args)
    finally:
        await records.close()


async def _list(settings: Settings, as_json: bool, *, here: bool) -> int:
    from invincat_server.runtime.records import saved_threads

    workspace = _this_project() if here else None
    threads = await saved_threads(settings.threads_db, workspace)
    if as_json:
        print(json.dumps([t.to_json_dict() for t in threads]))
        return EXIT_OK
    if not threads:
        print(f"No saved threads in {_shown(workspace)}." if workspace else "No saved threads.")
        return EXIT_OK
    projects = [_shown(t.workspace) for t in threads]
    width = max(len("PROJECT"), *map(len, projects))
    print(f"{'THREAD':<16}  {'UPDATED':<25}  {'PROJECT':<{width}}  TITLE")
    for t, project in zip(threads, projects, strict=True):
        print(f"{t.thread_id:<16}  {t.updated_at:<25}  {project:<{width}}  {t.title}")
    return EXIT_OK


def _this_project() -> str:
    """The project root `invincat chat` started here records its threads under."""
    from pathlib import Path

    from invincat_server.runtime.config import find_project_root
    from invincat_server.runtime.policy.workspace import Workspace

    return str(Workspace(find_project_root(Path.cwd())).root)


def _shown(workspace: str) -> str:
    """A project's folder with the home folder as ~ (a column, not an address to copy)."""
    from pathlib import Path

    home = str(Path.home()).rstrip("/")
    if home and (workspace == home or workspace.startswith(home + "/")):
        workspace = "~" + workspace[len(home) :]
    # A folder name may hold control characters: shown escaped, never sent to the terminal.
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in workspace)


async def _delete(records: Records, args: argparse.Namespace) -> int:
    info = await records.thread(args.thread_id)
    if info is None:
        return _unknown(args.thread_id)
    waiting = await records.pending(info.thread_id)
    print(f"Thread {_describe(info)}")
    if waiting:
        print(_waiting_note(waiting))
        if args.yes and not args.discard_pending:
            print(
                f"invincat: kept {info.thread_id}: its approvals still wait for a decision; "
                "resolve them (`invincat chat --thread ID`) or add --discard-pending.",
                file=sys.stderr,
            )
            return EXIT_FAILED
        question = "Delete it and discard the waiting approvals? This cannot be undone."
    else:
        question = "Delete it? This cannot be undone."
    if not (args.yes or confirm(question)):
        print("Nothing deleted.")
        return EXIT_OK
    await records.delete_thread(info.thread_id)
    await records.reclaim_space()
    print(f"Deleted {info.thread_id}.")
    return EXIT_OK


async def _prune(records: Records, args: argparse.Namespace) -> int:
    cutoff = datetime.now(UTC) - timedelta(days=args.older_than)
    old = await records.threads_older_than(cutoff)
    if not old:
        print(f"No threads older than {args.older_than:g} days.")
        return EXIT_OK
    plain: list[ThreadInfo] = []
    waiting: list[tuple[ThreadInfo, list[ApprovalRecord]]] = []
    for info in old:
        pending = await records.pending(info.thread_id)
        if pending:
            waiting.append((info, pending))
        else:
            plain.append(info)
    print(f"{plural(len(old), 'thread')} last used more than {args.older_than:g} days ago:")
    for info in plain:
        print(f"  {_describe(info)}")
    for info, pending in waiting:
        print(f"  {_describe(info)}")
        print(f"  {_waiting_note(pending)}")
    # One question for the whole list: a no there ends the command; only after a yes is
    # each thread with waiting approvals asked about on its own.
    if not (args.yes or confirm(f"Delete {_these(len(old))}? This cannot be undone.")):
        print("Nothing deleted.")
        return EXIT_OK
    chosen = plain + [info for info, pending in waiting if _delete_waiting(info, args)]
    for info in chosen:
        await records.delete_thread(info.thread_id)
    if chosen:
        await records.reclaim_space()
    print(f"Deleted {plural(len(chosen), 'thread')}; kept {len(old) - len(chosen)}.")
    return EXIT_OK


def _delete_waiting(info: ThreadInfo, args: argparse.Namespace) -> bool:
    """Whether to delete a thread that still has approvals waiting (asks unless --yes)."""
    if not args.yes:
        return confirm(f"{info.thread_id}: also delete it and discard its waiting approvals?")
    if not args.discard_pending:
        print(f"  kept {info.thread_id} (add --discard-pending to delete it with --yes)")
    return bool(args.discard_pending)


def _these(count: int) -> str:
    return "this thread" if count == 1 else f"these {count} threads"


def _describe(info: ThreadInfo) -> str:
    return f"{info.thread_id}  {info.updated_at}  {info.title}"


def _waiting_note(waiting: list[ApprovalRecord]) -> str:
    tools = ", ".join(sorted({str(r.request.get("tool_name") or "a plan") for r in waiting}))
    return (
        f"  ! {plural(len(waiting), 'approval')} still {'waits' if len(waiting) == 1 else 'wait'} "
        f"for a decision ({tools}); "
        "deleting the thread discards them."
    )


def _unknown(thread_id: str) -> int:
    print(
        f"invincat: unknown thread {thread_id!r}; list threads with `invincat threads list`.",
        file=sys.stderr,
    )
    return EXIT_FAILED
