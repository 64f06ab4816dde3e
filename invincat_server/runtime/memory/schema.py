"""The store format's plain constants and the tier rule, without pydantic: the models
(models.py) validate with them and the quick reader (reader.py) reads with them, so the
two cannot drift apart."""

from __future__ import annotations

from typing import Literal

Scope = Literal["user", "project"]
Tier = Literal["hot", "warm", "cold"]

SCOPES: tuple[Scope, ...] = ("user", "project")
STORE_VERSION = 2
"""What this version writes. 2: ids that cannot clash (ids.py), no `next_seq`, entries in
id order. An older invincat treats a version-2 store as read-only ("upgrade invincat")
instead of resetting a store whose new ids it cannot read."""
READABLE_VERSIONS = (1, 2)
HOT_MIN, WARM_MIN = 70, 30
MAX_SECTION, MAX_CONTENT, MAX_SCORE_REASON = 80, 500, 200
ID_PREFIX: dict[str, str] = {"user": "u", "project": "p"}
"""The letter after `mem_` in an entry id of each scope."""


def tier_for(score: int) -> Tier:
    if score >= HOT_MIN:
        return "hot"
    if score >= WARM_MIN:
        return "warm"
    return "cold"


MAX_ENTRY_DEPTH = 32
"""How deeply an entry's JSON may nest (unknown fields included). A store comes from git
or a hand edit: without a bound, one entry nested thousands deep would break every later
`json.dumps` of it (front ends print entries), so such an entry is invalid."""


def nesting_depth_exceeds(value: object, limit: int = MAX_ENTRY_DEPTH) -> bool:
    """True when `value` (plain JSON data) nests deeper than `limit` containers.

    Iterative, so it never hits the interpreter's recursion limit itself."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def path_is_nameable(path: str) -> bool:
    """A cited path the OS can name: no NUL byte (every path call refuses one with
    ValueError, which no caller expects of a stored string)."""
    return "\x00" not in path


MAX_AUTHOR_NAME, MAX_AUTHOR_EMAIL, MAX_BRANCH = 100, 254, 200
"""Bounds of the attribution an entry records (`source.author`, `source.branch`)."""


def plain_label(value: object, limit: int) -> bool:
    """A stored name, e-mail or branch: 1..`limit` printable characters (no NUL, no
    control or escape characters: front ends print them on terminals)."""
    return isinstance(value, str) and 1 <= len(value) <= limit and value.isprintable()
