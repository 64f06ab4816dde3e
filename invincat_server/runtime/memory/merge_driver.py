"""git's merge driver for the shared project store: `invincat memory merge-driver`.

git calls `<driver> %O %A %B %P` when both sides changed `.invincat/memory_project.json`
(merge, pull, rebase, cherry-pick): %O holds the common ancestor (empty when there is
none), %A ours, %B theirs, %P the path. The driver leaves the result in %A and exits 0,
or exits non-zero for a conflict.

A side is untrusted input (a pull brings whatever someone committed), so each goes
through the checks a store gets before a write: it must parse and validate whole (a bad
entry, two entries with one id, conflict markers, a newer format refuse the merge, as
they refuse a write), and no entry either side changed may hold a secret (governance's
residual check, the one that drops a create). Then merge.py decides entry by entry, the
result is validated again, written to %A (atomically), and only then journaled in this
clone's journal (actor `merge`, with before/after for `revert`): a journal never claims a
merge whose result git did not get.

A refusal journals nothing and changes no store: %A gets both sides whole between git's
conflict markers, so every memory command refuses the file as it refuses any conflict,
with the ways out, until a person resolves it. A side too large to read (MAX_SIDE_BYTES)
is never read whole, so then %A is left as git gave it. No network, no model, no git call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from invincat_server.runtime import private_files
from invincat_server.runtime.memory import journal
from invincat_server.runtime.memory.changeset import BatchContext, new_batch_id
from invincat_server.runtime.memory.conflicts import conflict_marker_line
from invincat_server.runtime.memory.errors import MemoryStoreError
from invincat_server.runtime.memory.limits import MemoryLimits
from invincat_server.runtime.memory.merge import merge_states
from invincat_server.runtime.memory.models import now_iso
from invincat_server.runtime.memory.paths import store_files
from invincat_server.runtime.memory.redaction import residual_secrets
from invincat_server.runtime.memory.report import JournalRecord
from invincat_server.runtime.memory.store import (
    CorruptStoreError,
    StoreState,
    dump_state,
    duplicate_id_in,
    parse_store,
    sha256_hex,
)
from invincat_server.runtime.memory.writer import StoreWriter

STORE_PATH = ".invincat/memory_project.json"
"""The one path the driver merges (git's %P, relative to the work tree's top)."""

MAX_SIDE_BYTES = 64 * 1024 * 1024
"""A side larger than this is refused unread: a store of 200 entries is ~200 KB."""


_WHOSE = {"base": "the base's", "ours": "ours'", "theirs": "theirs'", "merged": "the merged"}
"""How each side is named in a message (git's words: ours is %A, theirs is %B)."""


class MergeRefused(Exception):
    """The sides cannot be merged through governance; the message says why and what next.

    `read` holds the three versions when each was read whole within MAX_SIDE_BYTES
    before the refusal (leave_conflicted writes them back); None when one was not."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.read: dict[str, bytes] | None = None


@dataclass(frozen=True)
class MergeSides:
    """git's arguments: the three temp files and the path they stand for."""

    base: Path
    ours: Path
    theirs: Path
    name: str


@dataclass
class MergeDone:
    record: JournalRecord
    result: bytes


def merge_store_files(project_root: Path, home: Path, sides: MergeSides) -> MergeDone:
    """Merge, journal and write the result to `sides.ours`; MergeRefused otherwise."""
    if Path(sides.name).as_posix() != STORE_PATH:
        raise MergeRefused(
            f"{sides.name} is not the project memory store: this driver merges only "
            f"{STORE_PATH} (check the merge=invincat-memory lines of .gitattributes)"
        )
    data = {side: _read_side(side, getattr(sides, side)) for side in ("base", "ours", "theirs")}
    try:
        return _merge_read_sides(project_root, home, sides, data)
    except MergeRefused as exc:
        exc.read = data
        raise


def _merge_read_sides(
    project_root: Path, home: Path, sides: MergeSides, data: dict[str, bytes]
) -> MergeDone:
    states = {side: _parse_side(side, raw) for side, raw in data.items()}
    _refuse_secrets(states)
    files = store_files(home, project_root)
    limits = MemoryLimits()  # the defaults: a merge reads no settings (memory_share_cli.py)
    writer = StoreWriter(files, lock_timeout=limits.lock_timeout)
    project = files["project"]
    try:
        with writer.locked("project"):
            journal.check_resolved(project.journal, root=project.root)  # appendable
            ctx = BatchContext(new_batch_id(), "project", "merge", now_iso())
            outcome = merge_states(states["base"], states["ours"], states["theirs"], ctx, limits)
            result = dump_state(outcome.state) if outcome.changed else data["ours"]
            _parse_side("merged", result)  # the result is validated like any store
            outcome.state.hash = sha256_hex(result)
            outcome.reason = f"git merged theirs' {STORE_PATH} into ours"
            proposed: list[Any] = [
                {
                    "op": "merge",
                    "path": STORE_PATH,
                    **{side: sha256_hex(raw) if raw else None for side, raw in data.items()},
                }
            ]
            # %A first, then the journal: a result git never gets must not be journaled
            # as a merge. (Should the journal fail after it, the refusal's markers
            # replace it; should the process die between the two, git reports the
            # conflict and the next governed write journals the file as `external`.)
            if outcome.changed:
                try:
                    _write_result(sides.ours, result)
                except OSError as exc:
                    why = exc.strerror or exc
                    raise MergeRefused(f"cannot write the result to {sides.ours}: {why}") from exc
            record = writer.commit(
                ctx, outcome, proposed, hash_before=sha256_hex(data["ours"]), write=False
            )
    except (MemoryStoreError, OSError) as exc:
        raise MergeRefused(f"this clone's project memory cannot record the merge: {exc}") from exc
    return MergeDone(record, result)


def leave_conflicted(sides: MergeSides, refused: MergeRefused) -> bool:
    """What a refused merge leaves in %A: both sides whole between conflict markers, so
    the store is refused (conflicts.py) until a person takes one side or combines them.
    Written from the versions the merge already read, never read again: when one was
    not read whole (over MAX_SIDE_BYTES, unreadable), %A is left as git gave it (ours'
    version; git still lists the file as unmerged) and False is returned."""
    if refused.read is None:
        return False
    ours, theirs = refused.read["ours"], refused.read["theirs"]
    text = (
        b"<<<<<<< ours\n"
        + _with_newline(ours)
        + b"=======\n"
        + _with_newline(theirs)
        + b">>>>>>> theirs\n"
    )
    _write_result(sides.ours, text)
    return True


def _with_newline(data: bytes) -> bytes:
    return data if data.endswith(b"\n") or not data else data + b"\n"


def _read_side(side: str, path: Path) -> bytes:
    try:
        fd = private_files.open_file(path, os.O_RDONLY)  # git's temp file; no link followed
    except OSError as exc:
        why = exc.strerror or exc
        raise MergeRefused(f"cannot read {_WHOSE[side]} version ({path}): {why}") from exc
    too_large = MergeRefused(f"{_WHOSE[side]} version is larger than {MAX_SIDE_BYTES // 2**20} MiB")
    with os.fdopen(fd, "rb") as fh:
        if os.fstat(fh.fileno()).st_size > MAX_SIDE_BYTES:
            raise too_large  # refused unread
        data = fh.read(MAX_SIDE_BYTES + 1)  # bounded even if the file grows meanwhile
    if len(data) > MAX_SIDE_BYTES:
        raise too_large
    return data


def _parse_side(side: str, data: bytes) -> StoreState:
    if side == "base" and not data.strip():
        return StoreState("project")  # no common ancestor: both sides added the store
    try:
        return parse_store(data, "project")
    except CorruptStoreError as exc:
        line = conflict_marker_line(data)
        if line is not None:
            problem = f"has git conflict markers (line {line})"
        elif (dupe := duplicate_id_in(data)) is not None:
            problem = f"has two entries with the id {dupe}"
        else:
            problem = exc.problem
    except MemoryStoreError as exc:  # e.g. a newer store format
        problem = str(exc)
    raise MergeRefused(f"{_WHOSE[side]} version of {STORE_PATH} {problem}")


def _refuse_secrets(states: dict[str, StoreState]) -> None:
    """No entry a side changed may hold a secret: governance drops such a create, so a
    store that holds one was edited by hand, and the merge would journal and spread it."""
    base = states["base"].entries
    changed = [
        (side, entry_id, "\n".join(_strings(entry.to_json())))
        for side in ("ours", "theirs")
        for entry_id, entry in states[side].entries.items()
        if base.get(entry_id) != entry
    ]
    # One pass over all of them first (the formats' regexes cost per call, not per
    # character); only when it finds something is each entry checked, to name it. A hit
    # that spans two entries' text is no entry's secret.
    if not changed or not residual_secrets("\n\n".join(text for _, _, text in changed)):
        return
    for side, entry_id, text in changed:
        found = residual_secrets(text)
        if found:
            raise MergeRefused(
                f"{_WHOSE[side]} entry {entry_id} holds what looks like a secret "
                f"({', '.join(found)}); remove it from that version first"
            )


def _strings(value: object) -> list[str]:
    """Every string of an entry's JSON, keys too (unknown fields can hold anything)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (str(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _write_result(path: Path, data: bytes) -> None:
    """Replace %A whole (git reads it back by name once the driver exits): a crash
    leaves git's version or ours, never half of one; a link there is refused."""
    private_files.atomic_write(path, data, root=path.parent)
