"""The one short human line shown for a tool's result ("Wrote 1 line to notes.txt",
"3 matches (+2 lines)"). Computed once here and sent as the `summary` field of
`tool_result`, so the terminal, VS Code and Neovim show the same words (a call's own
`summary` is its title in the phrase book, runtime/tool_phrases.py). Pure functions: no
LangChain, no I/O.
"""

from __future__ import annotations

import re

from invincat_server.runtime.wording import plural

MAX_RESULT_HEAD = 100
_EXIT_STATUS = re.compile(r"\[exit code: [^\]]*\]")  # the last line of `execute`'s result


def result_summary(content: str) -> str:
    """A result's first line (cut at MAX_RESULT_HEAD) and how many lines follow."""
    lines = content.strip().splitlines() or [""]
    # A command's closing `[exit code: N]` is said after the count, not counted as output:
    # "(no output) [exit code: 0]", not "(no output) (+1 lines)".
    status = lines.pop() if len(lines) > 1 and _EXIT_STATUS.fullmatch(lines[-1]) else ""
    more = f" (+{plural(len(lines) - 1, 'line')})" if len(lines) > 1 else ""
    return lines[0][:MAX_RESULT_HEAD] + more + (f" {status}" if status else "")
