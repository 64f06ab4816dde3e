"""`invincat memory ...`: list, inspect and change governed memory from a terminal.

A thin consumer of `MemoryService`: every change goes through the same governance
pipeline as the memory agent's, journaled with actor `cli` (apply) or `user` (archive,
restore, delete, revert). Importing this module is cheap; the memory package is loaded
only when a memory command actually runs. `list`, `show` and `log` first try the quick
reader (runtime/memory/reader.py: no pydantic, issue 15) and print the same view dicts
from whichever path read them, so the output is the same byte for byte.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from invincat_server.terminal.printable import printable

if TYPE_CHECKING:
    from invincat_server.runtime.config import Settings
    from invincat_server.runtime.memory import BatchReport, MemoryService
    from invincat_server.runtime.memory.report import DroppedOp
    from invincat_server.runtime.project import Project

EXIT_OK, EXIT_USAGE, EXIT_REFUSED = 0, 2, 3
EXIT_STALE = 1
"""`verify` found at least one entry whose cited evidence changed or is gone, or one that
does not validate (skipped; the output names it)."""


class MemoryViews(Protocol):
    """What `list`, `show` and `log` print from: the quick reader or the service's views."""

    def list_view(
        self, scope: str | None = None, *, include_archived: bool = False, tier: str | None = None
    ) -> dict[str, Any]: ...

    def show_view(self, entry_id: str) -> dict[str, Any] | None: ...

    def log_view(
        self, scope: str | None = None, limit: int | None = None, author: str | None = None
    ) -> list[dict[str, Any]]: ...


def add_memory_parser(subparsers: Any) -> None:
    """Register `memory` and its subcommands on the top-level subparsers."""
    memory = subparsers.add_parser("memory", help="inspect and change governed long-term memory")
    memory.add_argument("--cwd", metavar="DIR", help="project directory (default: current)")
    # Accept --cwd after the subcommand too; SUPPRESS keeps it from overwriting the above.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cwd", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub = memory.add_subparsers(dest="memory_command", metavar="COMMAND")

    listing = sub.add_parser("list", parents=[common], help="list entries")
    listing.add_argument("--scope", choices=("user", "project"))
    listing.add_argument("--all", action="store_true", help="include archived entries")
    listing.add_argument("--tier", choices=("hot", "warm", "cold"))
    listing.add_argument("--json", action="store_true", help="machine-readable output")

    show = sub.add_parser("show", parents=[common], help="one entry and its journal history")
    show.add_argument("id", metavar="ID")
    show.add_argument("--json", action="store_true", help="machine-readable output")

    apply = sub.add_parser("apply", parents=[common], help="apply a batch through governance")
    apply.add_argument("--scope", choices=("user", "project"), required=True)
    apply.add_argument("source", metavar="FILE|-", help='{"operations": [...]} file, - for stdin')

    for name, help_text in (
        ("archive", "archive an entry (kept, never injected)"),
        ("restore", "make an archived entry active again"),
        ("delete", "delete an entry (asks first; revert its batch to undo)"),
    ):
        action = sub.add_parser(name, parents=[common], help=help_text)
        action.add_argument("id", metavar="ID")
        action.add_argument("--reason", required=True, help="why (journaled)")
        action.add_argument("--json", action="store_true", help="print the batch report")
        if name == "delete":
            action.add_argument("--yes", action="store_true", help="do not ask (for scripts)")

    log = sub.add_parser("log", parents=[common], help="the journal, newest first")
    log.add_argument("--scope", choices=("user", "project"))
    log.add_argument("--limit", type=int, metavar="N", help="only the N newest batches")
    log.add_argument(
        "--author",
        metavar="NAME",
        help="only batches by NAME or changing entries NAME proposed (part of name or e-mail)",
    )
    log.add_argument("--json", action="store_true", help="machine-readable output")

    verify = sub.add_parser(
        "verify",
        parents=[common],
        help="check cited entries against the files (exit 1 when one is stale or invalid)",
    )
    verify.add_argument("--scope", choices=("user", "project"))
    verify.add_argument("--all", action="store_true", help="include archived entries")
    verify.add_argument("--json", action="store_true", help="machine-readable output")

    revert = sub.add_parser("revert", parents=[common], help="undo a batch as a new batch")
    revert.add_argument("batch_id", metavar="BATCH_ID")
    revert.add_argument("--json", action="store_true", help="print the batch report")

    from invincat_server.terminal.memory_share_cli import add_share_parsers
    from invincat_server.terminal.memory_transfer_cli import add_transfer_parsers

    add_share_parsers(sub, common)
    add_transfer_parsers(sub, common)


def _fail(message: str) -> int:
    print(f"invincat memory: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_memory_command(settings: Settings, args: argparse.Namespace) -> int:
    """Run one `invincat memory` subcommand; returns the exit code."""
    from invincat_server.runtime.project import Project, project_root

    cwd = Path(args.cwd) if args.cwd else Path(os.getcwd())
    if not cwd.is_dir():
        return _fail(f"--cwd {cwd} is not a directory.")
    if args.memory_command == "share":
        # Team sharing through git: no project service (`merge-driver` runs without
        # settings: cli._run_without_settings).
        from invincat_server.terminal.memory_share_cli import run_share

        return run_share(cwd, args)
    # The core Project, as every front end opens it: its quick reader and its one service.
    project = Project(settings, project_root(cwd))
    # `list` shows the instruction files read from the root down to this folder.
    args.instructions = lambda scope: project.memory_views.instructions_view(scope, cwd)
    if args.memory_command in ("import", "export"):
        from invincat_server.terminal.memory_transfer_cli import run_transfer

        return run_transfer(project, args)
    if args.memory_command in _READS:
        code = _quick_read(project, args)
        if code is not None:
            return code
    return _full(project, args)


def _quick_read(project: Project, args: argparse.Namespace) -> int | None:
    """`list`, `show`, `log` through the quick reader (no pydantic, issue 15); None when it
    cannot vouch for the stores or journals: then the full path runs, and reports,
    repairs or refuses as always. Nothing is printed before the whole view is read."""
    from invincat_server.runtime.memory.reader import NotSimple

    reader = project.data.memory_reader()  # None with INVINCAT_TEST_MEMORY_FULL_READ=1
    if reader is None:
        return None
    try:
        reader.check_conflicts(getattr(args, "scope", None))
        return _READS[args.memory_command](reader, args)
    except (NotSimple, OSError):
        return None


def _full(project: Project, args: argparse.Namespace) -> int:
    from invincat_server.runtime.memory import MemoryStoreError

    try:
        service = project.data.memory()
        # A store or journal left conflicted by git fails every command on its scope (with
        # the file and the way out), even one that would not have read that file.
        service.check_conflicts(getattr(args, "scope", None))
        if args.memory_command in _READS:
            code = _READS[args.memory_command](_ServiceViews(service), args)
        else:
            code = _HANDLERS[args.memory_command](service, args)
    except MemoryStoreError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{exc.filename or 'memory'}: {exc.strerror or exc}")
    for scope, problem in service.problems().items():
        print(f"invincat memory: warning ({scope}): {problem}", file=sys.stderr)
    return code


class _ServiceViews:
    """views.py over a MemoryService, shaped like the quick MemoryReader: `list`, `show`
    and `log` print the same view dicts whichever path read them."""

    def __init__(self, service: MemoryService) -> None:
        self._service = service

    def list_view(
        self, scope: str | None = None, *, include_archived: bool = False, tier: str | None = None
    ) -> dict[str, Any]:
        from invincat_server.runtime.memory.views import list_view

        # Problems go to stderr after the command (run_memory_command), not into the JSON.
        return list_view(
            self._service, scope, include_archived=include_archived, tier=tier, with_problems=False
        )

    def show_view(self, entry_id: str) -> dict[str, Any] | None:
        from invincat_server.runtime.memory.views import show_view

        return show_view(self._service, entry_id)

    def log_view(
        self, scope: str | None = None, limit: int | None = None, author: str | None = None
    ) -> list[dict[str, Any]]:
        from invincat_server.runtime.memory.views import log_view

        return log_view(self._service, scope, limit, author)


# -- output helpers -------------------------------------------------------------
def _print_json(value: object) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _summary(report: BatchReport) -> str:
    parts = [f"{a.op} {a.id}" if a.id else a.op for a in report.applied]
    text = f"batch {report.batch_id} ({report.scope}): "
    if report.rejected:
        return text + f"REJECTED: {report.reason}"
    text += ("applied " + ", ".join(parts)) if parts else "nothing applied"
    if report.dropped:
        text += "; dropped: " + "; ".join(_dropped(d) for d in report.dropped)
    return text


def _dropped(dropped: DroppedOp) -> str:
    """`#2 update: reason` for an operation of the batch, `revert: reason` for what a
    revert (which has no operation index) left alone."""
    where = f"#{dropped.index} " if dropped.index is not None else ""
    return f"{where}{dropped.op}: {dropped.reason}"


# -- handlers ---------------------------------------------------------------------
def _print_invalid(invalid: list[dict[str, Any]]) -> None:
    """One line per entry a read skipped because it does not validate."""
    for bad in invalid:
        label = f"items[{bad['index']}]" + (f" ({bad['id']})" if bad["id"] else "")
        print(f"INVALID {bad['scope']} {label}, skipped: {bad['reason']}")


def _list(views: MemoryViews, args: argparse.Namespace) -> int:
    from invincat_server.runtime.project import MemoryViewError

    try:
        files = args.instructions(args.scope)
    except MemoryViewError as exc:  # a bad [instructions]: the same error as chat's
        return _fail(exc.message)
    view = views.list_view(args.scope, include_archived=args.all, tier=args.tier) | files
    if args.json:
        _print_json(view)
        return EXIT_OK
    _print_entries(view, args)
    _print_instructions(view.get("instructions"))
    return EXIT_OK


def _print_instructions(files: list[dict[str, Any]] | None) -> None:
    """The instruction files, apart from the entries: a read-only tier, not memory."""
    if not files:
        return
    print("\nInstruction files (read-only, shown to the model before memory; not governed):")
    for item in files:
        by = f" (imported by {item['imported_by']})" if item["imported_by"] else ""
        if item["skipped"]:
            state = item["skipped"]
        else:
            state = f"{item['included']:,} bytes" + (
                f" of {item['size']:,}, truncated" if item["truncated"] else ""
            )
            if item.get("applies_to"):  # an auto-attached Cursor rule
                state += f", applies to {item['applies_to']}"
        print(f"  {item['path']}{by}  [source: {item['source']}]  {state}")


def _print_entries(view: dict[str, Any], args: argparse.Namespace) -> None:
    entries = view["items"]
    invalid = view.get("invalid_entries", [])
    if not entries:
        print("No memory entries." + ("" if args.all else " (--all includes archived ones)"))
        _print_invalid(invalid)
        return
    width = shutil.get_terminal_size((120, 24)).columns
    ids = _id_width(e["id"] for e in entries)
    names = {e["id"]: _author_name(e) for e in entries}
    # A BY column only when an entry has an author: stores from before attribution print
    # as they did.
    by = min(16, max(2, *(len(n) for n in names.values()))) if any(names.values()) else 0
    by_head = f"{'BY':<{by}} " if by else ""
    header = (
        f"{'ID':<{ids}} {'SCOPE':<8} {'TIER':<5} {'SCORE':>5} {'STATUS':<9} {by_head}"
        f"{'SECTION':<18} CONTENT"
    )
    print(header)
    for e in entries:
        status = e["status"] + ("*" if e["invalid"] else "") + ("!" if e["stale"] else "")
        by_cell = f"{_clip(names[e['id']], by):<{by}} " if by else ""
        line = (
            f"{e['id']:<{ids}} {e['scope']:<8} {e['tier']:<5} {e['score']:>5} {status:<9} "
            f"{by_cell}{_clip(e['section'], 18):<18} "
        )
        print(line + _clip(e["content"], max(20, width - len(line))))
    _print_invalid(invalid)


def _author_name(entry: dict[str, Any]) -> str:
    author = entry["source"].get("author")
    name = author.get("name") if isinstance(author, dict) else None
    return printable(name) if isinstance(name, str) else ""


def _id_width(ids: Iterable[str]) -> int:
    """The ID column: numbered ids (12 characters) kept their 13 columns; new ids
    (32 characters, runtime/memory/ids.py) widen it."""
    return max([13, *(len(i) + 1 for i in ids)])


def _show(views: MemoryViews, args: argparse.Namespace) -> int:
    view = views.show_view(args.id)
    if view is None:
        return _fail(f"No memory entry {args.id}.")
    if args.json:
        _print_json(view)
        return EXIT_OK
    entry = view["entry"]
    if entry is None and view.get("invalid_entry"):
        print(f"{args.id}: invalid, skipped: {view['invalid_entry']['reason']}")
    elif entry is None:
        print(f"{args.id}: deleted")
    else:
        from invincat_server.runtime.memory.reader import citation_label

        _print_entry(entry)
        for check in entry.get("verification", {}).get("citations", ()):
            state = check["state"] + (f": {check['change']}" if check.get("change") else "")
            print(f"  {'cites:':<12} {citation_label(check['citation'])} ({state})")
    print("History:")
    for record in view["history"]:
        ops = ", ".join(_history_ops(record, args.id)) or "mentioned"
        print(
            f"  {record['time'][:19].replace('T', ' ')}  {record['batch_id']}  "
            f"{record['actor']:<12} {ops}"
        )
    return EXIT_OK


def _history_ops(record: dict[str, Any], entry_id: str) -> list[str]:
    ops = []
    for applied in record["applied"]:
        if applied["id"] == entry_id:
            ops.append(applied["op"])
        elif applied.get("restored_from") == entry_id:  # an extra key of AppliedOp
            ops.append(f"re-created as {applied['id']}")
    for dropped in record["dropped"]:
        if dropped["id"] == entry_id:
            ops.append(f"{dropped['op']} dropped: {dropped['reason']}")
    return ops


def _print_entry(entry: dict[str, Any]) -> None:
    source = entry["source"]
    print(f"{entry['id']} ({entry['scope']}, {entry['status']})")
    rows = [
        ("section", entry["section"]),
        ("content", entry["content"]),
        (
            "score",
            f"{entry['score']} ({entry['tier']})"
            + (f": {entry['score_reason']}" if entry["score_reason"] else ""),
        ),
        ("confidence", entry["confidence"]),
        ("invalid", entry["invalid"] or "-"),
        ("created", f"{entry['created_at']} by {source['actor'] or '?'}"),
        ("updated", entry["updated_at"]),
    ]
    if entry["archived_at"]:
        rows.append(("archived", entry["archived_at"]))
    if by := _by(source.get("author")):
        rows.append(("author", by.removeprefix("by ")))
    if source.get("branch"):
        rows.append(("branch", printable(source["branch"])))
    if source["thread_id"]:
        rows.append(("thread", source["thread_id"]))
    for ev in source["evidence"]:
        rows.append(("evidence", f"{ev['tool']} {ev['path']}"))
    for name, value in rows:
        print(f"  {name + ':':<12} {value}")


def _apply(service: MemoryService, args: argparse.Namespace) -> int:
    from invincat_server.runtime.memory import BatchShapeError

    where = "stdin" if args.source == "-" else args.source
    try:
        raw = sys.stdin.buffer.read() if args.source == "-" else Path(args.source).read_bytes()
        batch = json.loads(raw.decode("utf-8"))
    except OSError as exc:
        return _fail(f"cannot read {where}: {exc.strerror or exc}")
    except UnicodeDecodeError:
        return _fail(f"{where} is not UTF-8 text")
    except json.JSONDecodeError as exc:
        return _fail(f"{where} is not valid JSON: {exc.msg} (line {exc.lineno})")
    try:
        report = service.apply(args.scope, batch, actor="cli")
    except BatchShapeError as exc:
        return _fail(f"{where}: {exc}")
    _print_json(report.to_json())
    return EXIT_REFUSED if report.rejected else EXIT_OK


def _single(service: MemoryService, args: argparse.Namespace) -> int:
    if args.memory_command == "delete" and not args.yes:
        refusal = _may_not_delete(service, args)
        if refusal is not None:
            return refusal
    action = getattr(service, args.memory_command)
    report: BatchReport = action(args.id, args.reason, actor="user")
    return _report_result(report, args.json)


def _may_not_delete(service: MemoryService, args: argparse.Namespace) -> int | None:
    """Ask before `memory delete` (as `threads delete` does); None: go ahead. Without a
    terminal to ask at, or with --json (stdout is the report), only --yes deletes."""
    from invincat_server.runtime.memory.views import show_view
    from invincat_server.terminal.confirm import confirm

    if args.json or not sys.stdin.isatty():
        why = "--json prints the report" if args.json else "there is no terminal to ask at"
        return _fail(f"delete asks first and {why}; add --yes to delete {args.id} without asking.")
    view = show_view(service, args.id)
    entry = view.get("entry") if view else None
    if entry is None:
        return None  # unknown or already deleted: the service says which, nothing to lose
    where = f"{entry['id']} ({entry['scope']}, {entry['status']})"
    print(f"{where} {printable(entry['section'])}: {_clip(printable(entry['content']), 200)}")
    if not confirm("Delete it? (`invincat memory revert` of its batch brings it back)"):
        print("Nothing deleted.")
        return EXIT_OK
    return None


def _report_result(report: BatchReport, as_json: bool) -> int:
    if as_json:
        _print_json(report.to_json())
    refused = report.rejected or bool(report.dropped and not report.applied)
    if not as_json:
        print(_summary(report), file=sys.stderr if refused else sys.stdout)
    return EXIT_REFUSED if refused else EXIT_OK


def _log(views: MemoryViews, args: argparse.Namespace) -> int:
    records = views.log_view(args.scope, args.limit, args.author)
    if args.json:
        _print_json(records)
        return EXIT_OK
    if not records:
        print(f"No batches by {args.author!r}." if args.author else "The memory journal is empty.")
        return EXIT_OK
    print(f"{'TIME':<19}  {'BATCH':<26}  {'SCOPE':<7}  {'ACTOR':<13} RESULT")
    for r in records:
        print(
            f"{r['time'][:19].replace('T', ' '):<19}  {r['batch_id']:<26}  "
            f"{r['scope']:<7}  {r['actor']:<13} {_outcome(r)}"
        )
    return EXIT_OK


def _outcome(record: dict[str, Any]) -> str:
    if record["rejected"]:
        return f"REJECTED: {record['reason']}"
    ops = [f"{a['op']} {a['id']}" if a["id"] else a["op"] for a in record["applied"]]
    text = ", ".join(ops) if ops else "no change"
    if record["reverts"]:
        text += f" (reverts {record['reverts']})"
    if record["dropped"]:
        text += f"; {len(record['dropped'])} dropped"
    if by := _by(record.get("author")):
        text += f" {by}"
    return text


def _by(author: object) -> str:
    """`by NAME` for a stored author (attribution is self-asserted: shown, not trusted)."""
    from invincat_server.runtime.memory.attribution import author_text

    text = author_text(author)
    return f"by {printable(text)}" if text else ""


def _verify(service: MemoryService, args: argparse.Namespace) -> int:
    """Read-only: moved citations are recorded by the session after its next turn."""
    from invincat_server.runtime.memory.views import verify_view
    from invincat_server.runtime.wording import plural

    report = verify_view(service, args.scope, include_archived=args.all)
    if args.json:
        _print_json(report)
    else:
        ids = _id_width(item["id"] for item in report["entries"])
        for item in report["entries"]:
            changes = [c["change"] for c in item["citations"] if c.get("change")]
            detail = "; ".join(changes) if changes else "evidence unchanged"
            print(f"{item['id']:<{ids}} {item['state']:<6} {detail}")
        _print_invalid(report["invalid_entries"])
        print(
            f"{plural(report['checked'], 'cited entry', 'cited entries')} checked: "
            f"{report['stale']} stale, "
            f"{report['moved']} moved"
            + (" (re-anchored after the next chat turn)" if report["moved"] else "")
            + (
                f"; {plural(report['invalid'], 'invalid entry', 'invalid entries')} skipped"
                if report["invalid"]
                else ""
            )
        )
    if service.problems():  # a store that could not be read at all: printed on stderr
        return EXIT_USAGE
    return EXIT_STALE if report["stale"] or report["invalid"] else EXIT_OK


def _revert(service: MemoryService, args: argparse.Namespace) -> int:
    # Checked first: reverting again would journal a batch that changes nothing and reads
    # as if later batches were in the way.
    undone_by = service.reverted_by(args.batch_id)
    if undone_by is not None:
        print(
            f"invincat memory: batch {args.batch_id} was already reverted by batch "
            f"{undone_by}; nothing changed (revert {undone_by} to re-do it).",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    return _report_result(service.revert(args.batch_id, actor="user"), args.json)


# Reads: through the quick reader when it can vouch for the files, else the service.
_READS: dict[str, Callable[[MemoryViews, argparse.Namespace], int]] = {
    "list": _list,
    "show": _show,
    "log": _log,
}
_HANDLERS = {
    "apply": _apply,
    "archive": _single,
    "restore": _single,
    "delete": _single,
    "revert": _revert,
    "verify": _verify,
}
