"""Entry ids: the time-ordered random form new entries get, and the numbered form of
older stores, which stays valid forever.

A new id is `mem_p_` / `mem_u_` and 26 characters of Crockford base32, lowercase: a
ULID (48 bits of milliseconds since 1970, then 80 random bits). The old scheme numbered
entries from the store's `next_seq`, so two clones that each added an entry gave both
the same id and every merge of the project store conflicted (issue 25); 80 random bits
cannot clash in practice, and the time in front keeps a store ordered by id ordered by
age. Lowercase on purpose: redaction's random-token rule looks for mixed case, so an id
in a proposal, a report or the journal is never masked as a secret.

Written here rather than taken from a ULID package: only generation is needed, in our
own prefixed lowercase spelling and monotonic within a process (the creates of one
batch keep the batch's order), which is a dozen lines of the standard library; the
format check is a pattern the pydantic models and the pydantic-free reader share.

No pydantic here: the quick reader (reader.py) and conflicts.py use this module.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
import time
from collections.abc import Container

from invincat_server.runtime.memory.schema import ID_PREFIX, Scope

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
"""Crockford's base32 digits, lowercase (no i, l, o, u: nothing to misread)."""
ULID_LENGTH = 26
_RANDOM_BITS = 80

ID_BODY = r"mem_([up])_([0-9]{6,}|[0-9a-hjkmnp-tv-z]{26})"
"""Both forms: `mem_p_000012` (numbered, older stores) and `mem_p_` + a lowercase ULID."""
ID_PATTERN = f"^{ID_BODY}$"
"""For pydantic's `pattern` (its regex engine's `$` is the true end of the text)."""
_ID = re.compile(ID_BODY)  # always with fullmatch: Python's `$` also matches before "\n"

ID_FORMS = "mem_p_ or mem_u_ followed by 26 lowercase base32 characters, or by 6+ digits"
"""How an id looks, for messages that refuse one."""

_lock = threading.Lock()
_last = (0, 0)
"""(milliseconds, random part) of the last id this process made."""


def _forget_last() -> None:
    global _last
    _last = (0, 0)


# A forked child would otherwise count on from its parent's last id, and both could make
# the same one in the same millisecond.
os.register_at_fork(after_in_child=_forget_last)


def _encode(value: int) -> str:
    digits = []
    for _ in range(ULID_LENGTH):
        digits.append(CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(digits))


def _next_ulid() -> str:
    global _last
    with _lock:
        now = time.time_ns() // 1_000_000
        last_ms, last_random = _last
        if now > last_ms:
            random_part = secrets.randbits(_RANDOM_BITS)
        elif last_random + 1 < 1 << _RANDOM_BITS:
            # The same millisecond (or the clock went back): one more than the last id,
            # so ids made one after another sort in the order they were made.
            now, random_part = last_ms, last_random + 1
        else:  # the random part ran out within one millisecond: take the next one
            now, random_part = last_ms + 1, secrets.randbits(_RANDOM_BITS)
        _last = (now, random_part)
    return _encode(now << _RANDOM_BITS | random_part)


def new_id(scope: Scope, taken: Container[str] = ()) -> str:
    """A fresh id of `scope`, not in `taken` (the ids of the store it goes into)."""
    while True:
        entry_id = f"mem_{ID_PREFIX[scope]}_{_next_ulid()}"
        if entry_id not in taken:
            return entry_id


def is_entry_id(entry_id: object) -> bool:
    return isinstance(entry_id, str) and _ID.fullmatch(entry_id) is not None


def id_scope(entry_id: str) -> Scope | None:
    """The scope an id belongs to, or None if it is not a memory id."""
    match = _ID.fullmatch(entry_id)
    if match is None:
        return None
    return "user" if match.group(1) == "u" else "project"


def is_numbered(entry_id: str) -> bool:
    """An id of the old numbered form (`mem_p_000012`)."""
    match = _ID.fullmatch(entry_id)
    return match is not None and match.group(2).isdigit() and len(match.group(2)) != ULID_LENGTH


def sort_key(entry_id: str) -> tuple[int, int, str]:
    """The order of entries in a store file: numbered ids first, by number (as older
    versions wrote them), then the others by spelling, which for a ULID is by time."""
    if is_numbered(entry_id):
        number = entry_id[6:].lstrip("0")
        return (0, len(number), number)
    return (1, 0, entry_id)
