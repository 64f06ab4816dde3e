"""The memory write seam: the one way a store changes and a batch is journaled.

Both `MemoryService` (governed batches, recovery, external changes) and the tamper watch
(putting back bytes a tool changed) write through a `StoreWriter`: take the scope's lock,
parse the bytes under it, then `commit` one batch (store write when asked, journal
append). It also remembers, per scope, the state this process last journaled — the
"previous content" an external change is diffed against.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from invincat_server.runtime.memory import journal
from invincat_server.runtime.memory.changeset import BatchContext, Outcome
from invincat_server.runtime.memory.models import Scope
from invincat_server.runtime.memory.paths import StoreFiles
from invincat_server.runtime.memory.report import JournalRecord
from invincat_server.runtime.memory.store import Store, StoreState


class StoreWriter:
    """Locked writes and journaling for the stores of every scope."""

    def __init__(self, files: dict[Scope, StoreFiles], *, lock_timeout: float) -> None:
        self.stores = {scope: Store(f, lock_timeout=lock_timeout) for scope, f in files.items()}
        self._journaled: dict[Scope, StoreState] = {}

    @contextmanager
    def locked(self, scope: Scope) -> Iterator[Store]:
        """Hold `scope`'s store lock (across processes) for a read-check-write."""
        store = self.stores[scope]
        with store.locked():
            yield store

    def parse(self, scope: Scope, data: bytes) -> StoreState:
        """Parse store bytes of `scope` (CorruptStoreError if they are not a store)."""
        return self.stores[scope].parse(data)

    def journaled(self, scope: Scope) -> StoreState | None:
        """The state this process last journaled or verified for `scope`, if any."""
        return self._journaled.get(scope)

    def remember(self, scope: Scope, state: StoreState) -> None:
        """`state` is what the journal's last record describes for `scope`."""
        self._journaled[scope] = state

    def forget(self, scope: Scope) -> None:
        """What this process remembered for `scope` no longer holds (files were put back)."""
        self._journaled.pop(scope, None)

    def commit(
        self,
        ctx: BatchContext,
        outcome: Outcome,
        proposed: list[Any],
        *,
        hash_before: str | None,
        write: bool,
        reverts: str | None = None,
        follows: str | None = None,
    ) -> JournalRecord:
        """Write (when asked) and journal one batch; the caller holds `locked(ctx.scope)`."""
        scope = ctx.scope
        store = self.stores[scope]
        hash_after = store.write_locked(outcome.state) if write else outcome.state.hash
        record = JournalRecord(
            batch_id=ctx.batch_id,
            time=ctx.time,
            scope=scope,
            actor=ctx.actor,
            thread_id=ctx.thread_id,
            rejected=outcome.rejected,
            reason=outcome.reason,
            proposed=proposed,
            applied=outcome.applied,
            dropped=outcome.dropped,
            before=outcome.before,
            after=outcome.after,
            hash_before=hash_before,
            hash_after=hash_after,
            reverts=reverts,
            follows=follows,
            author=ctx.author,
            branch=ctx.branch,
        )
        journal.append(store.files.journal, record, root=store.files.root)
        self._journaled[scope] = outcome.state
        return record
