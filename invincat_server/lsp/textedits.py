"""Minimal text changes between two versions of a document, in LSP positions.

Used twice: to turn an approved file change into small `TextEdit`s for
`workspace/applyEdit` (so the editor's undo, cursor and folds survive, which a
whole-document replacement would reset), and to find the ranges a pending edit would
change, where its diagnostics and code actions go. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from difflib import SequenceMatcher
from itertools import accumulate

from lsprotocol import types

__all__ = ["Hunk", "LineIndex", "diff_hunks", "split_lines"]

# LSP line terminators are exactly \n, \r\n and \r (str.splitlines knows many more).
_TERMINATOR = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
# Above this many differing lines, SequenceMatcher's cost is not worth smaller edits.
_MAX_DIFF_LINES = 5000

Hunk = tuple[int, int, str]
"""Replace `old[start:end]` with the text: offsets are str indices into the old text."""


def split_lines(text: str) -> list[str]:
    """Lines with their terminators, split as LSP clients split them."""
    return _LINE.findall(text)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def _trimmed(old: str, start: int, end: int, new: str) -> Hunk:
    """Shrink a hunk to the characters that really change, never splitting a CRLF."""
    segment = old[start:end]
    prefix = _common_prefix(segment, new)
    suffix = _common_suffix(segment[prefix:], new[prefix:])
    start, end, new = start + prefix, end - suffix, new[prefix : len(new) - suffix]
    # A position between \r and \n does not exist for the editor: widen to the pair.
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start, new = start - 1, "\r" + new
    if 0 < end < len(old) and old[end - 1] == "\r" and old[end] == "\n":
        end, new = end + 1, new + "\n"
    return start, end, new


def diff_hunks(old: str, new: str) -> list[Hunk]:
    """The changes that turn `old` into `new`: ascending, non-overlapping hunks."""
    if old == new:
        return []
    a, b = split_lines(old), split_lines(new)
    # Strip equal leading/trailing lines first: an agent edit usually touches a few lines
    # of a long file, and SequenceMatcher is quadratic in what is left.
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    a_off = [0, *accumulate(len(line) for line in a)]
    b_off = [0, *accumulate(len(line) for line in b)]
    if len(a_mid) > _MAX_DIFF_LINES or len(b_mid) > _MAX_DIFF_LINES:
        opcodes: list[tuple[str, int, int, int, int]] = [("replace", 0, len(a_mid), 0, len(b_mid))]
    else:
        opcodes = list(SequenceMatcher(None, a_mid, b_mid, autojunk=False).get_opcodes())
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        start, end = a_off[head + i1], a_off[head + i2]
        replacement = new[b_off[head + j1] : b_off[head + j2]]
        hunk = _trimmed(old, start, end, replacement)
        if hunk[0] != hunk[1] or hunk[2]:
            hunks.append(hunk)
    return hunks


class LineIndex:
    """Offsets → LSP positions for one text, in the client's position encoding."""

    def __init__(self, text: str, units: Callable[[str], int]) -> None:
        self.text = text
        self.units = units
        self.starts = [0, *(m.end() for m in _TERMINATOR.finditer(text))]

    def position(self, offset: int) -> types.Position:
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return types.Position(line=line, character=self.units(self.text[start:offset]))

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(start), end=self.position(end))

    def text_edits(self, hunks: list[Hunk]) -> list[types.TextEdit]:
        return [types.TextEdit(range=self.range(s, e), new_text=text) for s, e, text in hunks]
