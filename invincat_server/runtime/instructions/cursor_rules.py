"""Cursor's project rules (`.cursor/rules/*.mdc`): which ones reach the model, and how.

A rule file may open with a frontmatter block (`---` lines around `description:`,
`globs:` and `alwaysApply:`), which decides when Cursor applies it. We do what a Cursor
user expects of each of its four kinds, as far as a prompt can:

- *Always* (`alwaysApply: true`) and a file without frontmatter: included.
- *Auto attached* (`globs:` set): included with a note of its globs, so the model applies
  it to the files they match (Cursor attaches it when such a file is in play; which files
  a turn touches is not known before it starts).
- *Agent requested* (only a `description:`): not included; its line in the prompt names
  the file and the description, so the model reads it when the task fits, as Cursor's
  agent fetches it.
- *Manual* (frontmatter, none of the three): not included; it applies when mentioned
  (`@.cursor/rules/NAME.mdc` in a message attaches it).

The frontmatter is read line by line, not as YAML: Cursor writes globs unquoted
(`globs: src/**/*.ts, *.tsx`), which a YAML parser refuses (`*` starts an alias).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RULES_SUFFIX = ".mdc"
MAX_NOTE_CHARS = 300
"""A description or glob list longer than this is cut (it is prompt text)."""
MAX_FRONTMATTER_LINES = 64
"""A `---` block longer than this is no frontmatter, but text."""
MAX_FRONTMATTER_BYTES = 4096
"""Read of a rule beyond what is left of the instruction files' cap, so that its
frontmatter is seen (and not counted) even when little of the cap is left."""

_FENCE_LINE = "---"
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")
_ITEM = re.compile(r"^\s*-\s*(.*)$")


@dataclass(frozen=True)
class CursorRule:
    body: str
    """The text after the frontmatter (the whole text without one)."""
    has_frontmatter: bool = False
    always: bool = False
    globs: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class Verdict:
    include: bool
    applies_to: str | None = None
    """The globs an included auto-attached rule applies to (None: everywhere)."""
    reason: str | None = None
    """Why a rule that is not included is left out (and how to get it)."""


def parse_rule(text: str) -> CursorRule:
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != _FENCE_LINE:
        return CursorRule(text)
    end = next(
        (
            n
            for n, line in enumerate(lines[1 : MAX_FRONTMATTER_LINES + 1], start=1)
            if line.rstrip() == _FENCE_LINE
        ),
        None,
    )
    if end is None:  # an unclosed block (or one cut by the cap): all of it is text
        return CursorRule(text)
    fields: dict[str, str] = {}
    globs: list[str] = []
    current: str | None = None
    for line in lines[1:end]:
        item = _ITEM.match(line)
        if item is not None and current == "globs":  # a YAML block list under globs:
            globs.extend(_split(item.group(1)))
            continue
        key = _KEY.match(line)
        if key is None:
            continue
        current = key.group(1)
        fields[current] = key.group(2).strip()
        if current == "globs":
            globs.extend(_split(fields[current]))
    return CursorRule(
        body="\n".join(lines[end + 1 :]).lstrip("\n"),
        has_frontmatter=True,
        always=_unquote(fields.get("alwaysApply", "")).lower() == "true",
        globs=tuple(dict.fromkeys(globs)),
        description=_note(_unquote(fields.get("description", ""))),
    )


def verdict(rule: CursorRule, shown: str) -> Verdict:
    """Whether the rule at `shown` (its project-relative path) is included, and how."""
    if not rule.has_frontmatter or rule.always:
        return Verdict(True)
    if rule.globs:
        return Verdict(True, applies_to=_note(", ".join(rule.globs)))
    if rule.description:
        return Verdict(
            False,
            reason=(
                "not included: a Cursor rule applied on request; read the file when the "
                f"task is about: {rule.description}"
            ),
        )
    return Verdict(
        False,
        reason=(
            "not included: a manual Cursor rule (no alwaysApply, globs or description); "
            f"mention @{shown} in a message to use it"
        ),
    )


def rule_names(names: list[str]) -> list[str]:
    """The rule files among a folder's `names`, in name order (as Cursor lists them)."""
    return sorted(name for name in names if name.endswith(RULES_SUFFIX))


def _split(value: str) -> list[str]:
    """Globs as Cursor writes them: `a, b`, `["a", "b"]` or one quoted string."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    parts = (_unquote(part) for part in value.split(","))
    return [part for part in parts if part and part.isprintable()]


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1].strip()
    return value


def _note(value: str) -> str:
    """One printable line of at most MAX_NOTE_CHARS (a repository's text, shown in the
    listing and the prompt)."""
    value = "".join(ch if ch.isprintable() else " " for ch in value)
    value = " ".join(value.split())
    return value if len(value) <= MAX_NOTE_CHARS else value[: MAX_NOTE_CHARS - 1] + "…"
