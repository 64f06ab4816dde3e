"""Entry-by-entry reading of a store that does not validate as a whole.

A store comes from git or a hand edit, so any field may hold anything. The write path
needs the whole document valid (store.parse_store); the read paths (list, show, verify,
injection, search_memory, the editors' views) must not lose the valid entries because of
one bad one. `scan_store` validates each entry on its own with the same model
(`models.Entry`: the one definition of a valid entry), returns the valid ones and names
the others (`BadEntry`: where it is, its id if it has a printable one, why it is refused),
and never writes anything. What cannot be read entry by entry at all (not UTF-8, not
JSON, not an object, another scope, `items` not a list) is `CorruptStoreError`, as for the
write path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from invincat_server.runtime.memory.models import Entry, Scope
from invincat_server.runtime.memory.schema import READABLE_VERSIONS, STORE_VERSION
from invincat_server.runtime.memory.store import CorruptStoreError, load_json

# Only an id made of these is echoed back: a stored id could hold terminal escapes.
_PRINTABLE_ID = re.compile(r"[A-Za-z0-9_.-]{1,40}")
MAX_REASON = 300


@dataclass(frozen=True)
class BadEntry:
    """An entry a read skipped: its position in `items`, its id when it has a printable
    one, and why the model refuses it (field names and messages, never the value)."""

    scope: Scope
    index: int
    id: str | None
    reason: str

    def label(self) -> str:
        return f"items[{self.index}]" + (f" ({self.id})" if self.id else "")

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "index": self.index, "id": self.id, "reason": self.reason}


@dataclass(frozen=True)
class StoreScan:
    entries: list[Entry]
    bad: list[BadEntry]
    problem: str | None = None
    """Damage outside the entries (e.g. `next_seq`): the entries were still read."""


def validation_reason(exc: ValidationError) -> str:
    """loc + msg of the first errors, never the input (it could hold anything)."""
    parts = []
    for err in exc.errors(include_input=False, include_url=False)[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "entry"
        parts.append(f"{loc}: {str(err['msg']).removeprefix('Value error, ')}")
    reason = "; ".join(parts)
    return reason if len(reason) <= MAX_REASON else reason[: MAX_REASON - 1] + "…"


def _printable_id(item: object) -> str | None:
    raw = item.get("id") if isinstance(item, dict) else None
    return raw if isinstance(raw, str) and _PRINTABLE_ID.fullmatch(raw) else None


def _head_problem(doc: dict[str, Any]) -> str | None:
    version, next_seq = doc.get("version"), doc.get("next_seq")
    if type(version) is not int or version not in READABLE_VERSIONS:
        return f'has no valid "version" (expected {STORE_VERSION})'
    # Version 1's id counter: no longer used, but a damaged one is still damage (the
    # models refuse it), so older and newer versions judge such a store alike.
    if next_seq is not None and (type(next_seq) is not int or next_seq < 1):
        return 'has no valid "next_seq" (a whole number >= 1)'
    return None


def scan_store(data: bytes, scope: Scope) -> StoreScan:
    """The valid entries of `data` and the skipped ones; CorruptStoreError when it cannot
    be read entry by entry. Read-only: it never touches a file."""
    doc = load_json(data)
    if not isinstance(doc, dict):
        raise CorruptStoreError("is not a JSON object")
    if doc.get("scope") != scope:
        found = doc.get("scope")
        shown = found if isinstance(found, str) and len(found) <= 40 else type(found).__name__
        raise CorruptStoreError(f"has scope {shown!r}, expected {scope!r}")
    items = doc.get("items")
    if not isinstance(items, list):
        raise CorruptStoreError('has no "items" list')
    entries: list[Entry] = []
    bad: list[BadEntry] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        reason = None
        try:
            entry = Entry.model_validate(item)
        except ValidationError as exc:
            reason = validation_reason(exc)
        else:
            if entry.scope != scope:
                reason = f"scope {entry.scope!r} in a {scope} store"
            elif entry.id in seen:
                reason = f"the id {entry.id} appears twice"
        if reason is None:
            seen.add(entry.id)
            entries.append(entry)
        else:
            bad.append(BadEntry(scope, index, _printable_id(item), reason))
    return StoreScan(entries, bad, _head_problem(doc))


def damaged_store_message(path: Path, scope: Scope, problem: str) -> str:
    """A read found the whole store unreadable: what holds and what the next write does."""
    return (
        f"Memory store {path} {problem}. Reading left it untouched and uses none of its "
        f"entries; the next change to {scope} memory saves its exact bytes to a "
        f"memory_{scope}.corrupt-*.json backup and starts a fresh store (or fix the file "
        "by hand first)."
    )


def invalid_entries_message(path: Path, scope: Scope, bad: list[BadEntry]) -> str:
    """Why a write refuses a store with entries that do not validate, and the way out."""
    named = "; ".join(f"{b.label()}: {b.reason}" for b in bad[:3])
    more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
    return (
        f"Memory store {path} has {len(bad)} entr{'y' if len(bad) == 1 else 'ies'} that "
        f"do not validate: {named}{more}. Reads skip them and use the other entries; "
        f"changes to {scope} memory are refused, and the file left untouched, until they "
        "are fixed or removed by hand (edit the file, or `git checkout` a good version)."
    )
