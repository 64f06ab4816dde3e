"""Batches the runtime makes on its own: cleanup of invalid entries, external changes.

Cleanup (spec section 8) deletes every active entry whose `invalid` marker is set. The
marker is only ever set on purpose by a rescore or archive op, never inferred from text.

An external change (spec section 9) is a store that differs from what the journal last
recorded: a person edited the JSON, `git pull` brought a new version, or a writer died
between replacing the store and journaling. It is accepted once it validates, and
journaled as actor `external` with a per-entry diff when the previous content is known.
"""

from __future__ import annotations

from invincat_server.runtime.memory.changeset import Changeset
from invincat_server.runtime.memory.report import AppliedOp
from invincat_server.runtime.memory.store import StoreState


def plan_cleanup(cs: Changeset) -> None:
    for entry in list(cs.work.entries.values()):
        if entry.status == "active" and entry.invalid is not None:
            cs.remove(
                entry.id,
                AppliedOp.of(op="delete", id=entry.id, reason=f"marked invalid ({entry.invalid})"),
            )


def plan_external(previous: StoreState | None, cs: Changeset) -> None:
    """Describe how the store (cs.base) differs from `previous`, the last journaled state.

    `cs.before` is filled with the previous content of changed entries so that this
    batch can be reverted like any other.
    """
    current = cs.base
    if previous is None:
        cs.applied.append(
            AppliedOp.of(
                op="external",
                reason="store changed outside governance; previous content unknown",
                entries=len(current.entries),
            )
        )
        return
    ids = sorted(set(previous.entries) | set(current.entries))
    for entry_id in ids:
        old, new = previous.entries.get(entry_id), current.entries.get(entry_id)
        if old == new:
            continue
        cs.before[entry_id] = old.to_json() if old is not None else None
        kind = "create" if old is None else "delete" if new is None else "update"
        cs.applied.append(AppliedOp.of(op=kind, id=entry_id, by="external"))
