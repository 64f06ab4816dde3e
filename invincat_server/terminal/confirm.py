"""The y/N question the command-line subcommands ask before they delete or revoke."""

from __future__ import annotations

import sys


def confirm(question: str) -> bool:
    """Ask on stdin; anything but y/yes (including end of input) is a no."""
    print(f"{question} [y/N] ", end="", flush=True)
    answer = sys.stdin.readline()
    if not answer:
        print()
    return answer.strip().lower() in ("y", "yes")
