"""Three-way merge of two versions of a store against their common ancestor.

Pure: it gets three parsed stores (base, ours, theirs) and returns the changeset outcome
against *ours*, the version this clone has, so the journal's before/after describe what
the merge changed here and `revert` can undo it. Ids are compared as opaque strings:
nothing here reads a number out of an id or assumes an order of ids, so any id scheme
works. A new id comes from the store's own allocator (`Changeset.put_new`).

The rules (docs/memory.md, "How a merge decides"):

- an entry changed on one side only takes that change (an update, or a delete);
- changed on both sides to different versions: the later `updated_at` wins (a tie keeps
  ours); the losing version is journaled (`lost`);
- deleted on one side and changed on the other: the change wins (the entry is kept);
- created on theirs: kept, unless it is a near-duplicate (dedupe.py, as governance
  dedupes a create) of an active entry already here or of one of theirs' creates kept
  before it; then the entry kept is the fact, and theirs becomes a `noop` naming it,
  its content journaled as `lost`;
- one id created on both sides with different content (the per-clone numbering of
  older stores, `mem_p_000001`): a near-duplicate is one fact (ours kept), otherwise
  both are kept and theirs gets a new id at once, journaled with `reid_from`.

Bounds are not applied: a merge keeps every fact of both sides; the next governed batch
archives the weakest cold entries if the store is over `max_active`, as after a hand edit.
"""

from __future__ import annotations

from typing import Any

from invincat_server.runtime.memory.changeset import BatchContext, Changeset, Outcome
from invincat_server.runtime.memory.dedupe import DuplicateIndex
from invincat_server.runtime.memory.limits import MemoryLimits
from invincat_server.runtime.memory.models import Entry
from invincat_server.runtime.memory.report import AppliedOp
from invincat_server.runtime.memory.store import StoreState

BOTH_CHANGED = "changed on both sides: the later updated_at wins (a tie keeps ours)"
CHANGE_BEATS_DELETE = "deleted on one side, changed on the other: the change wins"
_NEW_ENTRY_DROPS = ("id",)


def merge_states(
    base: StoreState,
    ours: StoreState,
    theirs: StoreState,
    ctx: BatchContext,
    limits: MemoryLimits,
) -> Outcome:
    """The merged store as an outcome against `ours` (actor and time from `ctx`), bounds
    not applied. A create re-id'd here gets a fresh time-ordered random id (ids.py),
    which no clone has."""
    cs = Changeset(ours, ctx)
    fresh: list[Entry] = []
    for entry_id in _ids_in_order(base, ours, theirs):
        old = base.entries.get(entry_id)
        mine = ours.entries.get(entry_id)
        other = theirs.entries.get(entry_id)
        if other == old or other == mine:
            continue  # theirs did not change it, or both made the same change
        if old is None:
            fresh.append(other)  # type: ignore[arg-type]  # other != old, so not None
        else:
            _merge_existing(cs, entry_id, old, mine, other)
    _add_theirs_creates(cs, fresh)
    return cs.finish(limits, bounds=False)


def _ids_in_order(base: StoreState, ours: StoreState, theirs: StoreState) -> list[str]:
    """Every id once: ours' order, then theirs' new ones in theirs' order, then the rest."""
    seen = dict.fromkeys(ours.entries)
    seen.update(dict.fromkeys(theirs.entries))
    seen.update(dict.fromkeys(base.entries))
    return list(seen)


def _merge_existing(
    cs: Changeset, entry_id: str, old: Entry, mine: Entry | None, other: Entry | None
) -> None:
    """An entry of the base that theirs changed or deleted (and that differs from ours)."""
    if other is None:  # theirs deleted it
        if mine == old:
            cs.remove(entry_id, AppliedOp.of(op="delete", id=entry_id, by="merge", side="theirs"))
        elif mine is not None:
            cs.applied.append(
                AppliedOp.of(
                    op="keep",
                    id=entry_id,
                    by="merge",
                    rule=CHANGE_BEATS_DELETE,
                    lost="deleted by theirs",
                )
            )
        return
    if mine is None:  # ours deleted it, theirs changed it
        cs.put(
            other,
            AppliedOp.of(
                op="keep",
                id=entry_id,
                by="merge",
                side="theirs",
                rule=CHANGE_BEATS_DELETE,
                lost="deleted by ours",
            ),
        )
        return
    if mine == old:  # only theirs changed it
        cs.put(other, AppliedOp.of(op="update", id=entry_id, by="merge", side="theirs"))
        return
    if other.updated_at > mine.updated_at:
        cs.put(
            other,
            AppliedOp.of(
                op="update",
                id=entry_id,
                by="merge",
                side="theirs",
                rule=BOTH_CHANGED,
                lost=mine.to_json(),
            ),
        )
    else:
        cs.applied.append(
            AppliedOp.of(
                op="keep",
                id=entry_id,
                by="merge",
                side="ours",
                rule=BOTH_CHANGED,
                lost=other.to_json(),
            )
        )


def _add_theirs_creates(cs: Changeset, fresh: list[Entry]) -> None:
    """Theirs' new entries in order. An active one that is a near-duplicate of an
    active entry here (ours, or a create of theirs kept before it) is one fact: dropped
    as a `noop` naming the kept entry's id. Any other is added, under a new id when ours
    has its id; the index learns the id it is stored under, so a later near-duplicate
    names the entry that is really there (never ours' entry that had the same old id)."""
    dupes = DuplicateIndex(
        (e.id, e.content)
        for e in cs.work.entries.values()
        if e.status == "active" and e.invalid is None
    )
    for entry in fresh:
        indexed = entry.status == "active" and entry.invalid is None
        if indexed:
            duplicate = dupes.find(entry.content)
            if duplicate is not None:
                key, similarity = duplicate
                cs.applied.append(
                    AppliedOp.of(
                        op="noop",
                        id=key,
                        by="merge",
                        proposed_op="create",
                        reason=f"theirs' {entry.id} is a near-duplicate of {key} "
                        f"(similarity {similarity:.2f})",
                        lost=entry.to_json(),
                    )
                )
                continue
        if entry.id in cs.work.entries:  # the same id created on both sides
            stored = _reid(cs, entry)
        else:
            cs.put(entry, AppliedOp.of(op="create", id=entry.id, by="merge", side="theirs"))
            stored = entry
        if indexed:
            dupes.add(stored.id, stored.content)


def _reid(cs: Changeset, entry: Entry) -> Entry:
    fields: dict[str, Any] = {k: v for k, v in entry.to_json().items() if k not in _NEW_ENTRY_DROPS}
    applied = AppliedOp.of(
        op="create",
        by="merge",
        side="theirs",
        reid_from=entry.id,
        reason=f"{entry.id} was created on both sides with different content; theirs got a new id",
    )
    return cs.put_new(fields, applied)
