"""Git merge conflicts in a store or journal: recognised, named, never "repaired".

A project store shared through git can come out of `git merge` (or `pull`, `rebase`,
`stash pop`) with conflict markers. Such a file is not corrupt in the sense of section 9 of
the spec: both sides' entries are in it and a person has to choose. So it is never backed
up and replaced, never salvaged half-way, never appended to: every memory operation on that
scope fails with `MergeConflictError`, whose message names the file and the ways out, and
the file stays byte-for-byte as git left it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from invincat_server.runtime.memory.errors import MergeConflictError

if TYPE_CHECKING:
    from invincat_server.runtime.memory.models import Scope

# The lines git writes around a conflict: `<<<<<<< ours`, `||||||| base` (diff3 style),
# `=======`, `>>>>>>> theirs`. Invincat's JSON never starts a line with any of them (store
# lines start with whitespace or a brace, journal lines with `{`).
_MARKER = re.compile(rb"^(?:(?:<{7}|>{7}|\|{7})(?:[ \t][^\n]*)?|={7})\r?$", re.MULTILINE)
_QUICK = (b"<<<<<<<", b">>>>>>>", b"|||||||", b"=======")


def conflict_marker_line(data: bytes) -> int | None:
    """1-based line number of the first git conflict marker in `data`, or None."""
    if not any(marker in data for marker in _QUICK):  # fast for a large clean journal
        return None
    match = _MARKER.search(data)
    if match is None:
        return None
    return data.count(b"\n", 0, match.start()) + 1


def _take_one_side(path: Path) -> str:
    return f"`git checkout --ours -- {path}` or `git checkout --theirs -- {path}`"


def store_conflict(path: Path, scope: Scope, line: int) -> MergeConflictError:
    return MergeConflictError(
        f"Memory store {path} has unresolved git merge conflict markers (line {line}). "
        f"It was left untouched, and {scope} memory is neither used nor changed until the "
        "conflict is resolved: edit the file to keep the entries of both sides (valid JSON, "
        "each id only once), or take one side whole with "
        f"{_take_one_side(path)}; then `git add` it. The next memory command accepts the "
        "result and journals it.",
        path,
    )


def journal_conflict(path: Path, line: int) -> MergeConflictError:
    return MergeConflictError(
        f"Memory journal {path} has unresolved git merge conflict markers (line {line}). "
        "It was left untouched, and the memory it belongs to cannot change or show its "
        "history until the conflict is resolved: keep the lines of both sides and delete "
        "only the marker lines (<<<<<<<, |||||||, =======, >>>>>>>), or take one side with "
        f"{_take_one_side(path)}. The journal is this clone's own history and is not meant "
        f"to be shared: `git rm --cached {path}` stops tracking it.",
        path,
    )


def duplicate_id(path: Path, scope: Scope, entry_id: str) -> MergeConflictError:
    """Two entries with one id: what a merge that kept both sides' entries leaves (the
    same entry changed on both sides, or numbered ids of older versions, which clashed)."""
    from invincat_server.runtime.memory.ids import new_id  # pydantic-free, like this module

    return MergeConflictError(
        f"Memory store {path} has two entries with the id {entry_id} (after a git merge, "
        "both sides may have changed the same entry, or older versions of invincat gave "
        "two new entries the same number). It was left untouched, and "
        f"{scope} memory is neither used nor changed until this is fixed: if both are the "
        "same entry, delete one; otherwise give one of them a new id, such as "
        f"{new_id(scope)} (any id not in the store will do; new ids are random, so they "
        f"do not clash). Or take one side of the merge whole with {_take_one_side(path)}.",
        path,
    )
