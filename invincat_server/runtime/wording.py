"""Counted words for people: "1 cited entry", "3 cited entries", never "1 cited entries"
or "thread(s)". Every front end and tool that says a count goes through `plural`."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count word`, the word in the plural unless count is 1 (`many` when the plural is
    not the word plus "s": plural(2, "entry", "entries"))."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {many if many is not None else word + 's'}"
