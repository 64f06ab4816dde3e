"""`@path` imports of a CLAUDE.md, found the way Claude Code finds them.

An import is a word starting with `@` at the start of a line or after whitespace
(`see @docs/testing.md`), outside fenced code blocks and inline code spans, where `@x` is
an example, not an import. Trailing sentence punctuation is not part of the path. An
e-mail address (`me@example.com`) is no import: the `@` follows a letter.
"""

from __future__ import annotations

import re

MAX_IMPORTS_PER_FILE = 32
"""Imports followed per file; more are reported, not read (a file of 10,000 `@x` words
must not cost 10,000 opens on every change)."""

MAX_IMPORT_CHARS = 1024

_IMPORT = re.compile(r"(?:^|(?<=\s))@([^\s`]+)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_TRAILING = ".,;:!?)]}'\""


def find_imports(text: str) -> list[str]:
    """The import paths of `text`, in order, each once."""
    found: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        for match in _IMPORT.finditer(_CODE_SPAN.sub(" ", line)):
            target = match.group(1).rstrip(_TRAILING)
            # A control character (a terminal escape) or a 10,000-character word is no path
            # anyone writes; it would only reach the listing and the prompt.
            if not target.isprintable() or len(target) > MAX_IMPORT_CHARS:
                continue
            if target and target not in found:
                found.append(target)
    return found
