"""`invincat threads list`, `invincat threads delete ID` and `invincat threads prune`.

No agent stack, no model: this is bookkeeping. The project is opened as every front end
opens it (runtime/project: `Project`); listing goes through its light reads
(`project.data.threads`), delete and prune through `project.saved_threads`. Both ask
before deleting (`--yes` skips the question, for scripts). A thread with approvals waiting
for a decision is never deleted silently: the user is told and asked separately, and with
`--yes` it is kept unless `--discard-pending` is given too. A turn running in another
process right now is not visible from here; the editor's `invincat/threads/delete` (which
runs inside the server that owns the turns) refuses those.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from invincat_server.runtime.wording import plural
from invincat_server.terminal.confirm import confirm
from invincat_server.terminal.printable import printable

if TYPE_CHECKING:
    # Loaded only when a threads command runs: `invincat --help` builds this parser too.
    from invincat_server.runtime.config import Settings
    from invincat_server.runtime.project import Project
    from invincat_server.runtime.project.saved_threads import SavedThread, SavedThreads
    from invincat_server.runtime.records import ApprovalRecord, ThreadInfo

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
    from pathlib import Path

    from invincat_server.runtime.project import Project, project_root

    # The core Project of the directory we are in, as `chat` finds it (its root is what
    # `--here` means); its readers and its threads file serve every project's threads.
    try:
        root = project_root(Path.cwd())
    except OSError:  # the current directory was removed under the shell (or is unreadable)
        if args.threads_command == "list" and args.here:
            print(
                "invincat: --here lists the threads of the current directory's project, "
                "and the current directory no longer exists (or cannot be read); cd to the "
                "project first "
                "(without --here every project's threads are listed).",
                file=sys.stderr,
            )
            return EXIT_FAILED
        # Only --here reads the root: the other commands read the one threads file of
        # every project, so any root serves them.
        root = settings.home
    project = Project(settings, root)
    if args.threads_command == "list":
        return await _list(project, args.json, here=args.here)
    saved = project.saved_threads
    if not saved.exist():
        if args.threads_command == "delete":
            return _unknown(args.thread_id)
        print("No saved threads.")
        return EXIT_OK
    if args.threads_command == "delete":
        return await _delete(saved, args)
    return await _prune(saved, args)


async def _list(project: Project, as_json: bool, *, here: bool) -> int:
    workspace = str(project.root) if here else None
    threads = await project.data.threads(all_workspaces=not here)
    if as_json:
        print(json.dumps([t.to_json_dict() for t in threads]))
        return EXIT_OK
    if not threads:
        print(f"No saved threads in {_shown(workspace)}." if workspace else "No saved threads.")
        return EXIT_OK
    projects = [_shown(t.workspace) for t in threads]
    width = max(len("PROJECT"), *map(len, projects))
    print(f"{'THREAD':<16}  {'UPDATED':<25}  {'PROJECT':<{width}}  TITLE")
    for t, project_shown in zip(threads, projects, strict=True):
        print(f"{t.thread_id:<16}  {t.updated_at:<25}  {project_shown:<{width}}  {t.title}")
    return EXIT_OK


def _shown(workspace: str) -> str:
    """A project's folder with the home folder as ~ (a column, not an address to copy)."""
    from pathlib import Path

    home = str(Path.home()).rstrip("/")
    if home and (workspace == home or workspace.startswith(home + "/")):
        workspace = "~" + workspace[len(home) :]
    # A folder name may hold control characters: shown escaped, never sent to the terminal.
    return printable(workspace)


async def _delete(saved: SavedThreads, args: argparse.Namespace) -> int:
    found = await saved.thread(args.thread_id)
    if found is None:
        return _unknown(args.thread_id)
    info, waiting = found.info, found.waiting
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
    await saved.delete([info.thread_id])
    print(f"Deleted {info.thread_id}.")
    return EXIT_OK


async def _prune(saved: SavedThreads, args: argparse.Namespace) -> int:
    old = await saved.older_than(args.older_than)
    if not old:
        print(f"No threads older than {args.older_than:g} days.")
        return EXIT_OK
    plain = [thread.info for thread in old if not thread.waiting]
    waiting: list[SavedThread] = [thread for thread in old if thread.waiting]
    print(f"{plural(len(old), 'thread')} last used more than {args.older_than:g} days ago:")
    for info in plain:
        print(f"  {_describe(info)}")
    for thread in waiting:
        print(f"  {_describe(thread.info)}")
        print(f"  {_waiting_note(thread.waiting)}")
    # One question for the whole list: a no there ends the command; only after a yes is
    # each thread with waiting approvals asked about on its own.
    if not (args.yes or confirm(f"Delete {_these(len(old))}? This cannot be undone.")):
        print("Nothing deleted.")
        return EXIT_OK
    chosen = plain + [thread.info for thread in waiting if _delete_waiting(thread.info, args)]
    await saved.delete([info.thread_id for info in chosen])
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
