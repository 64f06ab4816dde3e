"""`invincat memory import|export`: copy memory between the JSON store files and the
database (runtime/memory/transfer.py), one line per scope copied."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from invincat_server.runtime.project import Project


def add_transfer_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    for name, help_text in (
        ("import", "copy memory from the JSON store files into the database (lossless)"),
        ("export", "copy memory from the database into the JSON store files (lossless)"),
    ):
        action = sub.add_parser(name, parents=[common], help=help_text)
        action.add_argument("--scope", choices=("user", "project"))


def run_transfer(project: Project, args: argparse.Namespace) -> int:
    from invincat_server.runtime.memory import MemoryStoreError
    from invincat_server.runtime.memory.transfer import transfer

    try:
        done = transfer(project.data.memory(), args.memory_command, args.scope)
    except MemoryStoreError as exc:
        print(f"invincat memory {args.memory_command}: {exc}", file=sys.stderr)
        return 3
    except OSError as exc:
        print(
            f"invincat memory {args.memory_command}: {exc.filename or 'memory'}: "
            f"{exc.strerror or exc}; nothing more was copied.",
            file=sys.stderr,
        )
        return 3
    for item in done:
        print(
            f"{args.memory_command}ed {item.scope} memory: {item.entries} entries, "
            f"{item.records} journal records (batch {item.batch_id})"
        )
    return 0
