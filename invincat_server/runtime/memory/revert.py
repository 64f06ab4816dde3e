"""`revert <batch>`: put back the pre-batch content of the entries a batch touched.

Semantics (documented in docs/memory.md), per entry the batch touched, judged against the
before/after states its journal record holds:

- created by the batch -> deleted;
- changed by the batch (update, rescore, archive, restore) -> every field set back to its
  before-state (status included), `updated_at` = now;
- deleted by the batch (including bounds deletes) -> re-created **under a new id**, since
  ids are never reused; the report maps `restored_from` old id -> new id. It comes back
  with `invalid` cleared, otherwise the next cleanup would delete it again.

A batch and the cleanup batch that followed it (`follows`) are reverted together, so
undoing a rescore that marked an entry invalid brings the entry back.

An entry whose current state is no longer the batch's after-state was changed by a later
batch: it is skipped with a reason (revert the later batch first) rather than clobbering
the later change. The revert is itself a journaled batch, so it can be reverted too.
"""

from __future__ import annotations

from typing import Any

from invincat_server.runtime.memory.changeset import Changeset, PendingCreate
from invincat_server.runtime.memory.models import Entry
from invincat_server.runtime.memory.report import AppliedOp, JournalRecord

_NEW_ENTRY_DROPS = ("id", "created_at", "updated_at", "archived_at", "reverted_from")


def reverted_by(records: list[JournalRecord], batch_id: str) -> str | None:
    """The batch in `records` (one scope's journal, oldest first) whose revert of
    `batch_id` still stands, or None. A revert counts when it applied something; one that
    was itself reverted no longer stands (reverting the revert re-did the batch). Lets a
    front end say "already reverted" instead of journaling a revert that can only drop
    every entry as "changed later"."""
    latest: dict[str, str] = {}  # batch -> the last batch that reverted it (applied)
    for record in records:
        if record.reverts and record.applied and not record.rejected:
            latest[record.reverts] = record.batch_id
    chain: list[str] = []  # the revert, the revert of that revert, ... (no recursion)
    current = batch_id
    while current in latest and len(chain) <= len(records):
        current = latest[current]
        chain.append(current)
    return chain[0] if len(chain) % 2 else None


def merge_followers(record: JournalRecord, followers: list[JournalRecord]) -> JournalRecord:
    """Treat a batch and the cleanup it triggered as one change for revert purposes.

    A rescore that marks an entry invalid is followed at once by a cleanup that deletes
    it; reverting the rescore must bring the entry back, not stop at "deleted later".
    """
    if not followers:
        return record
    before, after = dict(record.before), dict(record.after)
    for follower in followers:
        for entry_id, old in follower.before.items():
            before.setdefault(entry_id, old)
        after.update(follower.after)
    return record.model_copy(update={"before": before, "after": after})


def plan_revert(record: JournalRecord, cs: Changeset) -> None:
    """Add the revert of `record` to `cs` (whose context scope is the record's scope)."""
    now = cs.ctx.time
    for entry_id in sorted(set(record.before) | set(record.after)):
        before, after = record.before.get(entry_id), record.after.get(entry_id)
        if before == after:
            continue
        current = cs.work.entries.get(entry_id)
        current_json = current.to_json() if current is not None else None
        if current_json != after:
            state = "deleted" if current is None else "modified"
            cs.drop(
                None,
                "revert",
                f"{entry_id} was {state} after batch {record.batch_id}; revert the later "
                "batch first",
                entry_id,
            )
            continue
        if before is None:
            cs.remove(entry_id, AppliedOp.of(op="delete", id=entry_id, reverts=record.batch_id))
        elif after is None:
            cs.pending.append(_recreation(before, entry_id, record.batch_id, now))
        else:
            restored = Entry.model_validate({**before, "updated_at": now})
            cs.put(restored, AppliedOp.of(op="revert", id=entry_id, reverts=record.batch_id))


def _recreation(before: dict[str, Any], old_id: str, batch_id: str, now: str) -> PendingCreate:
    fields = {k: v for k, v in before.items() if k not in _NEW_ENTRY_DROPS}
    fields |= {
        "invalid": None,
        "created_at": now,
        "updated_at": now,
        "archived_at": now if before.get("status") == "archived" else None,
        "reverted_from": {"id": old_id, "batch_id": batch_id},
    }
    applied = AppliedOp.of(op="create", restored_from=old_id, reverts=batch_id)
    return PendingCreate(fields=fields, applied=applied, index=None)
