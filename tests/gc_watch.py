"""Run the real `invincat` entry point with a watch on the garbage collector: every full
(generation 2) collection is written to stderr as `full-gc stack=S frozen=N`, where S is
1 once LangChain's OpenAI integration is imported and N is `gc.get_freeze_count()`.

A full collection with `stack=1 frozen=0` rescanned the ~200,000 objects of the agent
stack, 35-250 ms each (runtime/bulk_import.py prevents them); one with `frozen` > 0 scans
only what was made since the stack was frozen."""

from __future__ import annotations

import sys

WATCH = """
import gc, sys

def report(phase, info):
    if phase == "stop" and info["generation"] == 2:
        stack = int("langchain_openai" in sys.modules)
        sys.stderr.write(f"full-gc stack={stack} frozen={gc.get_freeze_count()}\\n")

gc.callbacks.append(report)
from invincat_server.cli import main
sys.exit(main(sys.argv[1:]))
"""


def watched(*args: str) -> list[str]:
    """The command line that runs `invincat ARGS` under the watch."""
    return [sys.executable, "-c", WATCH, *args]


def rescans_of_the_stack(stderr: str) -> list[str]:
    """The full collections that scanned the imported stack before it was frozen."""
    return [line for line in stderr.splitlines() if line == "full-gc stack=1 frozen=0"]
