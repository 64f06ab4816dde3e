"""`invincat chat --remote NAME "PROMPT"` and `invincat remote list|approve|cancel`.

Background runs of Invincat's worker agent on a LangGraph deployment configured under
`remote` in subagents.json (docs/remote.md). This only parses, calls
runtime/remote/runs.py and prints: text for people, one JSON object per line with
`--json` (docs/protocol.md#remote-runs). No agent stack, no model here: the server runs
the tools, after the approvals given here.

Exit codes: 0 done, 1 the deployment refused or could not be reached, or the thread is
unknown or waits for nothing, 2 usage errors (also an unknown deployment name).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.terminal.printable import printable

if TYPE_CHECKING:
    from invincat_server.runtime.config import Settings
    from invincat_server.runtime.remote.runs import Listing, RemoteRuns

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_remote_parser(subparsers: Any) -> None:
    remote = subparsers.add_parser(
        "remote", help="runs on LangGraph deployments: list, approve, cancel"
    )
    remote_sub = remote.add_subparsers(dest="remote_command", metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cwd", metavar="DIR", help="project directory (default: current)")
    common.add_argument("--json", action="store_true", help="machine-readable output")
    listing = remote_sub.add_parser(
        "list", parents=[common], help="threads whose remote run waits for an approval"
    )
    listing.add_argument("name", nargs="?", metavar="NAME", help="only this deployment")
    for verb, text in (
        ("approve", "approve (or --reject) every call a thread waits on; it runs on"),
        ("cancel", "cancel a thread's running run"),
    ):
        sub = remote_sub.add_parser(verb, parents=[common], help=text)
        sub.add_argument("thread", metavar="THREAD", help="the thread id (see `remote list`)")
        sub.add_argument(
            "--deployment", metavar="NAME", help="where the thread is (default: any configured)"
        )
        if verb == "approve":
            sub.add_argument("--reject", action="store_true", help="reject instead: nothing runs")
            sub.add_argument("--message", metavar="TEXT", help="with --reject: told to the model")


def _runs(settings: Settings, cwd_arg: str | None) -> RemoteRuns:
    from invincat_server.runtime.project.root import project_root
    from invincat_server.runtime.remote.runs import RemoteRuns

    cwd = Path(cwd_arg) if cwd_arg else Path(os.getcwd())
    if not cwd.is_dir():
        raise NotADirectoryError(f"--cwd {cwd} is not a directory.")
    return RemoteRuns.load(
        settings.home, project_root(cwd), lambda m: print(f"invincat: {m}", file=sys.stderr)
    )


def _fail(message: str, code: int = EXIT_FAILED) -> int:
    print(f"invincat: {printable(message)}", file=sys.stderr)
    return code


async def _with_runs(settings: Settings, args: argparse.Namespace, body: Any) -> int:
    from invincat_server.runtime.remote.runs import RemoteError

    try:
        runs = _runs(settings, args.cwd)
    except NotADirectoryError as exc:
        return _fail(str(exc), EXIT_USAGE)
    try:
        return int(await body(runs))
    except RemoteError as exc:
        return _fail(str(exc), EXIT_USAGE if exc.kind == "unknown_deployment" else EXIT_FAILED)
    finally:
        await runs.aclose()


def _run(coro: Any) -> int:
    import asyncio  # here, not at the top: `invincat --help` builds this parser

    return int(asyncio.run(coro))


def _emit(as_json: bool, event: dict[str, Any], text: str) -> None:
    print(json.dumps(event, ensure_ascii=False) if as_json else printable(text), flush=True)


# chat --remote ---------------------------------------------------------------
def run_remote_chat(settings: Settings, args: argparse.Namespace) -> int:
    """Start the prompt as a background run on deployment `args.remote`."""

    async def body(runs: RemoteRuns) -> int:
        started = await runs.start(args.remote, args.prompt)
        _emit(
            args.json,
            {"type": "remote_run_started", **started},
            f"Started on {started['deployment']}: thread {started['thread_id']}, run "
            f"{started['run_id']} ({started['status']}). See `invincat remote list`.",
        )
        if not args.wait:
            return EXIT_OK
        status = await runs.wait(args.remote, started["thread_id"], started["run_id"])
        listing = await runs.pending(args.remote)
        waiting = [p for p in listing.pending if p.thread_id == started["thread_id"]]
        calls = [c.summary for p in waiting for c in p.calls]
        _emit(
            args.json,
            {"type": "remote_run_ended", **started, "status": status, "pending": calls},
            f"Run {started['run_id']} ended: {status}."
            + (f" Waiting for approval: {'; '.join(calls)}." if calls else ""),
        )
        return EXIT_OK if status == "success" else EXIT_FAILED

    return _run(_with_runs(settings, args, body))


# remote list|approve|cancel ----------------------------------------------------
def run_remote_command(settings: Settings, args: argparse.Namespace) -> int:
    if args.remote_command == "list":
        return _run(_with_runs(settings, args, lambda runs: _list(runs, args)))
    if args.remote_command == "approve":
        if args.message and not args.reject:
            return _fail("--message goes with --reject.", EXIT_USAGE)
        return _run(_with_runs(settings, args, lambda runs: _approve(runs, args)))
    return _run(_with_runs(settings, args, lambda runs: _cancel(runs, args)))


async def _list(runs: RemoteRuns, args: argparse.Namespace) -> int:
    listing = await runs.pending(args.name)
    if args.json:
        print(json.dumps(listing.to_json(), ensure_ascii=False))
        return EXIT_OK
    print(_listing_text(listing, args.name))
    return EXIT_OK


def _listing_text(listing: Listing, name: str | None) -> str:
    lines: list[str] = []
    for item in listing.pending:
        lines.append(f"{item.deployment}  thread {item.thread_id}  ({item.kind})")
        lines.extend(f"    {c.tool_name}: {c.summary}" for c in item.calls)
    if not lines:
        lines.append(f"No remote run waits for an approval on {name or 'any deployment'}.")
    if listing.skipped:
        lines.append(f"({listing.skipped} waiting thread(s) in a shape Invincat does not know.)")
    return printable("\n".join(lines))


async def _approve(runs: RemoteRuns, args: argparse.Namespace) -> int:
    done = await runs.decide(
        args.thread, reject=args.reject, message=args.message, deployment=args.deployment
    )
    verb = "Rejected" if args.reject else "Approved"
    _emit(
        args.json,
        {"type": "remote_decided", **done},
        f"{verb} on {done['deployment']}: {'; '.join(done['calls'])}. Thread "
        f"{done['thread_id']} goes on in run {done['run_id']}.",
    )
    return EXIT_OK


async def _cancel(runs: RemoteRuns, args: argparse.Namespace) -> int:
    done = await runs.cancel(args.thread, args.deployment)
    _emit(
        args.json,
        {"type": "remote_cancelled", **done},
        f"Cancelled {len(done['cancelled'])} run(s) of thread {done['thread_id']} on "
        f"{done['deployment']}.",
    )
    return EXIT_OK
