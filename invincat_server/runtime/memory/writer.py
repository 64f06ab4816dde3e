"""The memory write seam: the one way a store changes and a batch is journaled.

Both `MemoryService` (governed batches, recovery, external changes) and the tamper watch
(putting back bytes a tool changed) write through a `StoreWriter`: take the scope's lock,
parse the bytes under it, then `commit` one batch (store write when asked, journal
append). It also remembers, per scope, the state this process last journaled — the
"previous content" an external change is diffed against.

Reads go through it as well (`read`, `records`, `last_record`, `change_key`), so the
service never names a file: `StoreWriter` keeps each scope in its JSON store and journal
files (the embedded default); `PgStoreWriter` (pg_writer.py) keeps them in PostgreSQL,
and the governance above it is the same code either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from invincat_server.runtime.memory import journal
from invincat_server.runtime.memory import store as store_mod
from invincat_server.runtime.memory.attribution import Attribution
from invincat_server.runtime.memory.changeset import BatchContext, Outcome
from invincat_server.runtime.memory.models import Scope
from invincat_server.runtime.memory.paths import StoreFiles
from invincat_server.runtime.memory.report import JournalRecord
from invincat_server.runtime.memory.store import Store, StoreState, read_bytes


class StoreWriter:
    """Locked writes and journaling for the stores of every scope (in files)."""

    files_backed = True
    """The stores are files a tool could reach (so the tamper watch guards them)."""

    def __init__(self, files: dict[Scope, StoreFiles], *, lock_timeout: float) -> None:
        self.stores = {scope: Store(f, lock_timeout=lock_timeout) for scope, f in files.items()}
        self._journaled: dict[Scope, StoreState] = {}

    @contextmanager
    def locked(self, scope: Scope) -> Iterator[Store]:
        """Hold `scope`'s store lock (across processes) for a read-check-write."""
        store = self.stores[scope]
        with store.locked():
            yield store

    def read(self, scope: Scope) -> bytes | None:
        """The store's bytes (None: no store yet); no lock needed, writes are atomic."""
        files = self.stores[scope].files
        return read_bytes(files.store, root=files.root)

    def exists(self, scope: Scope) -> bool:
        return self.stores[scope].files.store.exists()

    def change_key(self, scope: Scope) -> object:
        """Changes whenever the store does (None: no store); cheap, for read caches."""
        from invincat_server.runtime.memory.injection import stat_key

        return stat_key(self.stores[scope].files.store)

    def records(self, scope: Scope) -> list[JournalRecord]:
        """Every readable journal record, oldest first (MergeConflictError if conflicted)."""
        files = self.stores[scope].files
        return journal.read_all(files.journal, root=files.root)

    def last_record(self, scope: Scope) -> JournalRecord | None:
        files = self.stores[scope].files
        return journal.last_record(files.journal, root=files.root)

    def check_journal(self, scope: Scope) -> None:
        """MergeConflictError if the journal holds git conflict markers."""
        files = self.stores[scope].files
        journal.check_resolved(files.journal, root=files.root)

    def backup_target(self, scope: Scope, kind: str) -> str:
        """Where `save_backup` would keep a copy now (a new file's path)."""
        return str(self.stores[scope].files.backup(kind))

    def save_backup(self, scope: Scope, target: str, data: bytes) -> None:
        """Keep `data` (a store about to be replaced) at `target`; OSError when it could
        not be kept (then nothing may replace the store)."""
        store_mod.write_backup(Path(target), data, root=self.stores[scope].files.root)

    def change_feed(self) -> tuple[str, dict[Scope, str]] | None:
        """(database URL, namespace per scope) when commits are announced by the database
        (pg_changes.py); None for files, whose changes the store watch polls."""
        return None

    def check_may_write(self, scope: Scope, who: Callable[[], Attribution]) -> None:
        """Refuse (MemoryStoreError) a batch its author (`who()`, asked only when needed:
        it may run `git config`) may not make: files are guarded by their permissions, so
        nothing more here; pg_writer.py checks `[memory] writers`."""

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
        hash_after = self._write_locked(scope, outcome.state) if write else outcome.state.hash
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
        self._append_locked(scope, record)
        self._journaled[scope] = outcome.state
        return record

    def _write_locked(self, scope: Scope, state: StoreState) -> str:
        return self.stores[scope].write_locked(state)

    def _append_locked(self, scope: Scope, record: JournalRecord) -> None:
        files = self.stores[scope].files
        journal.append(files.journal, record, root=files.root)
