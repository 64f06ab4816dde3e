"""Text from outside Invincat made safe to print on a terminal.

File names, prompts, diffs, memory entries, rules and folder names come from the
repository, the user's files or the model: an escape sequence in one (a file named
`a\x1b[2Jb.txt`) would clear the screen, retitle the window or hide what follows. The
command-line front ends show such text through `printable`, which writes every character
that is not printable as Python escapes it (`\x1b`, `\n`, `\u200b`) — visible, never
sent as is. The live area of the rich REPL uses `strip_terminal_control` instead: a
command's coloured output is shown without its escape sequences.
"""

from __future__ import annotations

import re

# Escape sequences and control characters a command may print: shown as-is they would
# move the cursor or recolour the live area (tabs are kept, as spaces).
_TERMINAL_CONTROL = re.compile(
    r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|.)|[\x00-\x08\x0b-\x1f\x7f]"
)


def printable(text: str, keep: str = "") -> str:
    """`text` with each character that is not printable escaped (`\\x1b`); the characters
    in `keep` (a diff line's tab) are left as they are."""
    return "".join(ch if ch.isprintable() or ch in keep else repr(ch)[1:-1] for ch in text)


def printable_lines(text: str) -> str:
    """Several lines (a unified diff): each line `printable` with its tabs kept, the line
    breaks kept."""
    return "\n".join(printable(line, keep="\t") for line in text.split("\n"))


def strip_terminal_control(line: str) -> str:
    """A line of command output safe to draw inside the live area: escape sequences and
    control characters taken out, a tab as four spaces."""
    return _TERMINAL_CONTROL.sub("", line).replace("\t", "    ")
