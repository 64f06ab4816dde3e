"""What a batch did: the report returned to the proposer and the journal record.

The report is the answer to "what happened to my batch"; the journal record is the
report plus what is needed to audit and revert it: the ops as proposed (redacted) and
the before/after content of every entry the batch touched.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from invincat_server.runtime.memory.models import Scope


class AppliedOp(BaseModel):
    """One change made to the store (or a noop), with the id it concerns.

    `index` is the op's position in the proposal; None for changes the runtime made on
    its own (bounds, cleanup, revert). Extra keys explain: `by` ("bounds"),
    `duplicate_of`, `restored_from`, `reason`.
    """

    model_config = ConfigDict(extra="allow")

    op: str
    id: str | None = None
    index: int | None = None

    @classmethod
    def of(
        cls, op: str, id: str | None = None, index: int | None = None, **extra: Any
    ) -> AppliedOp:
        """Build one with explanatory extras (`by`, `reason`, `restored_from`, ...)."""
        return cls.model_validate({"op": op, "id": id, "index": index, **extra})


class DroppedOp(BaseModel):
    """A proposed op that was not applied, and why."""

    model_config = ConfigDict(extra="allow")

    index: int | None
    op: str
    reason: str
    id: str | None = None


class BatchReport(BaseModel):
    """The outcome of one governed batch (spec section 4)."""

    model_config = ConfigDict(extra="allow")

    batch_id: str
    scope: Scope
    actor: str
    time: str
    rejected: bool = False
    reason: str | None = None
    applied: list[AppliedOp] = Field(default_factory=list)
    dropped: list[DroppedOp] = Field(default_factory=list)
    hash_before: str | None = None
    hash_after: str | None = None
    reverts: str | None = None
    cleanup_batch_id: str | None = None
    """Set when the cleanup that follows every batch deleted invalid entries."""

    @property
    def changed(self) -> bool:
        return self.hash_before != self.hash_after

    def created_ids(self) -> list[str]:
        return [a.id for a in self.applied if a.op == "create" and a.id]

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class JournalRecord(BaseModel):
    """One line of `memory_<scope>.journal.jsonl`.

    `before`/`after` map every touched id to its full entry (None when it did not exist on
    that side), which is what `revert` restores from.
    """

    model_config = ConfigDict(extra="allow")

    batch_id: str
    time: str
    scope: Scope
    actor: str
    thread_id: str | None = None
    rejected: bool = False
    reason: str | None = None
    proposed: list[Any] = Field(default_factory=list)
    applied: list[AppliedOp] = Field(default_factory=list)
    dropped: list[DroppedOp] = Field(default_factory=list)
    before: dict[str, dict[str, Any] | None] = Field(default_factory=dict)
    after: dict[str, dict[str, Any] | None] = Field(default_factory=dict)
    hash_before: str | None = None
    hash_after: str | None = None
    next_seq: int | None = None
    """Older records only: the id counter after the batch (numbered ids). New ids are random
    (ids.py), so newer records leave it null."""
    reverts: str | None = None
    follows: str | None = None
    """For a cleanup batch: the batch whose invalid markers it acted on."""
    author: dict[str, Any] | None = None
    """Who made the batch (`{"name", "email"}`, attribution.py) when a person or their
    session did: not for the runtime's own batches (cleanup, external, recovery)."""
    branch: str | None = None
    """The git branch it was made on, when known."""

    def touches(self, entry_id: str) -> bool:
        return (
            entry_id in self.before
            or entry_id in self.after
            or any(
                a.id == entry_id or (a.model_extra and entry_id in a.model_extra.values())
                for a in self.applied
            )
            or any(d.id == entry_id for d in self.dropped)
        )

    def report(self, cleanup_batch_id: str | None = None) -> BatchReport:
        return BatchReport(
            batch_id=self.batch_id,
            scope=self.scope,
            actor=self.actor,
            time=self.time,
            rejected=self.rejected,
            reason=self.reason,
            applied=self.applied,
            dropped=self.dropped,
            hash_before=self.hash_before,
            hash_after=self.hash_after,
            reverts=self.reverts,
            cleanup_batch_id=cleanup_batch_id,
        )
