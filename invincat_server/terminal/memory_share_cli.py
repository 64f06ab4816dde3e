"""`invincat memory share` and `invincat memory merge-driver`: project memory for teams.

Thin: the merge is runtime/memory/merge_driver.py (what git runs), the set-up
runtime/memory/sharing.py. Both need no project service, no model and no network.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_CONFLICT, EXIT_USAGE = 0, 1, 2


def add_share_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    share = sub.add_parser(
        "share",
        parents=[common],
        help="merge the project store through governance in git (.gitattributes + "
        "this clone's git config)",
    )
    share.add_argument("--json", action="store_true", help="machine-readable output")
    driver = sub.add_parser("merge-driver", parents=[common], help=DRIVER_HELP)
    _add_driver_arguments(driver)


DRIVER_HELP = "what git runs to merge .invincat/memory_project.json (set up by `share`)"


def _add_driver_arguments(driver: argparse.ArgumentParser) -> None:
    for name, text in (  # %% in argparse's help: git's own %O, %A, %B and %P
        ("base", "%%O: the common ancestor's version (empty: none)"),
        ("ours", "%%A: our version; the merged result is written here"),
        ("theirs", "%%B: their version"),
        ("path", "%%P: the path being merged"),
    ):
        driver.add_argument(name, help=text)


def run_merge_driver_argv(argv: list[str]) -> int:
    """`invincat memory merge-driver ARGS` as `share` registers it, what git runs for every
    merge of the store: parsed by the driver's own parser, so the process does not build
    (and import) the whole command line's subcommands first (bench/bench_merge.py)."""
    parser = argparse.ArgumentParser(prog="invincat memory merge-driver", description=DRIVER_HELP)
    parser.add_argument("--cwd", metavar="DIR", help=argparse.SUPPRESS)
    _add_driver_arguments(parser)
    return run_merge_driver(parser.parse_args(argv))


def run_share(cwd: Path, args: argparse.Namespace) -> int:
    from invincat_server.runtime.memory.sharing import ATTRIBUTE_LINE, ShareError, share

    try:
        result = share(cwd)
    except ShareError as exc:
        print(f"invincat memory: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
        return EXIT_OK
    done = "added" if result.line_added else "already has"
    print(f"{result.gitattributes}: {done} `{ATTRIBUTE_LINE}` (commit it: it names the driver)")
    for key, value in result.config.items():
        print(f"{result.repository}/.git/config (this clone only): {key} = {value}")
    print(
        "Each teammate runs `invincat memory share` once in their own clone: a repository "
        "can name the driver but never define it."
    )
    return EXIT_OK


def run_merge_driver(args: argparse.Namespace) -> int:
    """What git runs. It needs no settings (a broken config.toml must not turn every merge
    into a conflict that leaves ours in place unmarked): only the project and this clone's
    journal, found from the directory git runs it in."""
    from invincat_server.runtime.config import default_home
    from invincat_server.runtime.memory.merge_driver import (
        MergeRefused,
        MergeSides,
        leave_conflicted,
        merge_store_files,
    )
    from invincat_server.runtime.project import project_root

    cwd = Path(args.cwd) if getattr(args, "cwd", None) else Path(os.getcwd())
    sides = MergeSides(Path(args.base), Path(args.ours), Path(args.theirs), args.path)
    try:
        done = merge_store_files(project_root(cwd), default_home(os.environ), sides)
    except MergeRefused as exc:
        try:
            marked = leave_conflicted(sides, exc)
        except OSError:
            marked = False
        left = (
            "this driver left both sides in it between conflict markers, so invincat "
            "memory refuses it until you resolve it"
            if marked
            else "this driver left it as git gave it (ours' version; git lists it as unmerged)"
        )
        print(
            f"invincat memory merge-driver: not merged: {exc}. Nothing was journaled; git "
            f"marks {args.path} conflicted and {left}: take one side with `git checkout "
            "--ours` or `--theirs`, or combine them "
            "(docs/memory.md#sharing-project-memory-through-git).",
            file=sys.stderr,
        )
        return EXIT_CONFLICT
    except OSError as exc:
        print(f"invincat memory merge-driver: {exc}", file=sys.stderr)
        return EXIT_CONFLICT
    record = done.record
    counts: dict[str, int] = {}
    for applied in record.applied:
        counts[applied.op] = counts.get(applied.op, 0) + 1
    summary = ", ".join(f"{n} {op}" for op, n in sorted(counts.items())) or "no entry changed"
    print(
        f"invincat memory: merged {args.path} through governance ({summary}); batch "
        f"{record.batch_id}, `invincat memory revert {record.batch_id}` undoes it.",
        file=sys.stderr,
    )
    return EXIT_OK
