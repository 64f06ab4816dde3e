"""A batch being built: working copy, before-states, report lists, bounds, id allocation.

Every writer of the store (governed ops, revert, cleanup, external acceptance) goes
through a Changeset, so bounds, before/after capture for the journal and id allocation
work the same for all of them.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from invincat_server.runtime.memory.ids import new_id, sort_key
from invincat_server.runtime.memory.limits import MemoryLimits
from invincat_server.runtime.memory.models import Entry, Scope
from invincat_server.runtime.memory.report import AppliedOp, DroppedOp
from invincat_server.runtime.memory.store import StoreState


def new_batch_id() -> str:
    """`b_<UTC time>_<random>`: sortable by time, unique across processes."""
    return f"b_{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}_{secrets.token_hex(4)}"


@dataclass(frozen=True)
class BatchContext:
    batch_id: str
    scope: Scope
    actor: str
    time: str
    thread_id: str | None = None
    anchor: str | None = None
    author: dict[str, Any] | None = None
    """Who made the batch (attribution.py), recorded on its creates and its journal line."""
    branch: str | None = None


@dataclass
class PendingCreate:
    """An entry to add once bounds allow it; it gets its id only then."""

    fields: dict[str, Any]
    applied: AppliedOp
    index: int | None


@dataclass
class Outcome:
    """The result of building a batch; `state` is what will be written when `changed`."""

    state: StoreState
    applied: list[AppliedOp] = field(default_factory=list)
    dropped: list[DroppedOp] = field(default_factory=list)
    before: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    after: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    rejected: bool = False
    reason: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.after)


class Changeset:
    def __init__(self, state: StoreState, ctx: BatchContext) -> None:
        self.base = state
        self.work = state.copy()
        self.ctx = ctx
        self.before: dict[str, dict[str, Any] | None] = {}
        self.applied: list[AppliedOp] = []
        self.dropped: list[DroppedOp] = []
        self.pending: list[PendingCreate] = []
        self.restored: list[tuple[str, AppliedOp]] = []

    # -- recording ------------------------------------------------------------
    def _remember(self, entry_id: str) -> None:
        if entry_id not in self.before:
            old = self.base.entries.get(entry_id)
            self.before[entry_id] = old.to_json() if old is not None else None

    def put(self, entry: Entry, applied: AppliedOp | None = None) -> None:
        self._remember(entry.id)
        self.work.entries[entry.id] = entry
        if applied is not None:
            self.applied.append(applied)

    def remove(self, entry_id: str, applied: AppliedOp | None = None) -> None:
        self._remember(entry_id)
        self.work.entries.pop(entry_id, None)
        if applied is not None:
            self.applied.append(applied)

    def drop(self, index: int | None, op: str, reason: str, entry_id: str | None = None) -> None:
        self.dropped.append(DroppedOp(index=index, op=op, reason=reason, id=entry_id))

    def touched(self) -> set[str]:
        return set(self.before)

    # -- bounds ---------------------------------------------------------------
    def _enforce_active_bound(self, limits: MemoryLimits) -> None:
        active = [e for e in self.work.entries.values() if e.status == "active"]
        excess = len(active) + len(self.pending) - limits.max_active
        if excess <= 0:
            return
        touched = self.touched()
        # The weakest cold entries go first; entries this batch touched are exempt so a
        # batch never archives what it just created, restored or rescored.
        candidates = sorted(
            (e for e in active if e.tier == "cold" and e.id not in touched),
            key=lambda e: (e.score, e.updated_at, sort_key(e.id)),
        )
        for entry in candidates[:excess]:
            archived = entry.model_copy(
                update={
                    "status": "archived",
                    "archived_at": self.ctx.time,
                    "updated_at": self.ctx.time,
                }
            )
            self.put(
                archived,
                AppliedOp.of(
                    op="archive",
                    id=entry.id,
                    by="bounds",
                    reason=f"more than {limits.max_active} active entries; weakest cold entry",
                ),
            )
        excess -= min(excess, len(candidates))
        why = (
            f"store is full ({limits.max_active} active entries, no cold entry left to "
            "archive); archive or delete entries first"
        )
        while excess > 0 and self.pending:
            pending = self.pending.pop()
            self.drop(pending.index, pending.applied.op, why)
            excess -= 1
        while excess > 0 and self.restored:
            entry_id, applied = self.restored.pop()
            self.work.entries[entry_id] = self.base.entries[entry_id]
            self.applied = [a for a in self.applied if a is not applied]
            self.drop(applied.index, applied.op, why, entry_id)
            excess -= 1

    def _enforce_archived_bound(self, limits: MemoryLimits) -> None:
        archived = [e for e in self.work.entries.values() if e.status == "archived"]
        excess = len(archived) - limits.max_archived
        if excess <= 0:
            return
        oldest = sorted(archived, key=lambda e: (e.archived_at or "", sort_key(e.id)))[:excess]
        for entry in oldest:
            self.remove(
                entry.id,
                AppliedOp.of(
                    op="delete",
                    id=entry.id,
                    by="bounds",
                    reason=f"more than {limits.max_archived} archived entries; oldest archived",
                ),
            )

    # -- finishing ------------------------------------------------------------
    def put_new(self, fields: dict[str, Any], applied: AppliedOp) -> Entry:
        """Add an entry under a fresh id at once, for a writer that applies no bounds
        (a merge's re-id) and must know the id while it goes on."""
        # Random and time-ordered (ids.py): unique across clones, never a reused id.
        entry_id = new_id(self.ctx.scope, taken=self.work.entries)
        entry = Entry.model_validate({"id": entry_id, **fields})
        applied.id = entry_id
        self.put(entry, applied)
        return entry

    def _allocate(self) -> None:
        for pending in self.pending:
            self.put_new(pending.fields, pending.applied)
        self.pending = []

    def finish(self, limits: MemoryLimits, *, bounds: bool = True) -> Outcome:
        """Apply bounds, give pending creates their ids, and diff against the base."""
        if bounds:
            self._enforce_active_bound(limits)
        self._allocate()
        if bounds:
            self._enforce_archived_bound(limits)
        after: dict[str, dict[str, Any] | None] = {}
        before: dict[str, dict[str, Any] | None] = {}
        for entry_id, old in self.before.items():
            current = self.work.entries.get(entry_id)
            new = current.to_json() if current is not None else None
            if new != old:
                before[entry_id], after[entry_id] = old, new
        self.applied.sort(key=lambda a: (a.index is None, a.index or 0))
        self.dropped.sort(key=lambda d: (d.index is None, d.index or 0))
        return Outcome(
            state=self.work,
            applied=self.applied,
            dropped=self.dropped,
            before=before,
            after=after,
        )

    def reject(self, reason: str) -> Outcome:
        return Outcome(
            state=self.base.copy(),
            dropped=self.dropped,
            rejected=True,
            reason=reason,
        )
