"""Text a model wrote with read_file's line numbers still in front of its lines.

read_file shows a file as `cat -n` does (number, tab, text), and a small model copies that
view into what it writes: Qwen2.5-Coder-1.5B wrote calc.py back as `    1        def
add(a, b):`, `    2        return a + b`, … (bench run 21). Such a write is refused, so
nothing is written and nobody is asked to approve it; the error says what to send instead.
The numbers must count up by one, open most lines, and be followed by a tab or two spaces
before text on at least two of them, so `x = [\\n    1,\\n    2,\\n]` or a file of bare
numbers is not taken for one.
"""

from __future__ import annotations

import re
from itertools import pairwise

_NUMBERED = re.compile(r"^ *(\d{1,7})(\t| {2,}|$)")
MIN_NUMBERED = 3
SHARE = 0.8


def copied_line_numbers(text: str) -> int | None:
    """The first line number when `text`'s lines carry read_file's line-number prefixes,
    or None."""
    lines = text.splitlines()
    numbers: list[int] = []
    with_text = 0
    for line in lines:
        match = _NUMBERED.match(line)
        if match is None:
            continue
        numbers.append(int(match.group(1)))
        if match.group(2) and line[match.end() :].strip():
            with_text += 1
    written = sum(1 for line in lines if line.strip())
    if len(numbers) < MIN_NUMBERED or with_text < 2 or len(numbers) < SHARE * written:
        return None
    if any(later != earlier + 1 for earlier, later in pairwise(numbers)):
        return None
    return numbers[0]


def refusal(display: str, argument: str, first: int) -> str:
    """The error for a write whose `argument` carries the numbers, from `first` on."""
    return (
        f"{argument} opens its lines with line numbers ({first}, {first + 1}, …) as read_file "
        f"shows them: they are not part of {display}. Nothing was written: send the file's "
        "own text, each line as it is after the number and its tab, without the numbers."
    )
