"""MemoryService: the one entry point for reading and changing governed memory.

Synchronous on purpose (file locks and fsync are blocking): the async runtime calls it
through `asyncio.to_thread`. Every change - a proposer's batch, a person's archive,
a revert, the cleanup - is a journaled batch through the same locked write path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from invincat_server.runtime.memory.attribution import Attributor
from invincat_server.runtime.memory.changeset import (
    BatchContext,
    Changeset,
    Outcome,
    new_batch_id,
)
from invincat_server.runtime.memory.citations import CitationResolver
from invincat_server.runtime.memory.errors import (
    InvalidEntriesError,
    MemoryStoreError,
    MergeConflictError,
    ReadOnlyMemoryError,
    StoreUnavailableError,
    UnknownBatchError,
    UnknownEntryError,
)
from invincat_server.runtime.memory.governance import coerce_operations, govern
from invincat_server.runtime.memory.housekeeping import plan_cleanup, plan_external
from invincat_server.runtime.memory.ids import ID_FORMS
from invincat_server.runtime.memory.injection import InjectionRenderer
from invincat_server.runtime.memory.limits import MemoryLimits, load_limits
from invincat_server.runtime.memory.models import SCOPES, Entry, Scope, id_scope, now_iso
from invincat_server.runtime.memory.paths import store_files
from invincat_server.runtime.memory.protection import PathGuard
from invincat_server.runtime.memory.redaction import redact_deep
from invincat_server.runtime.memory.report import AppliedOp, BatchReport, JournalRecord
from invincat_server.runtime.memory.revert import merge_followers, plan_revert, reverted_by
from invincat_server.runtime.memory.scan import (
    BadEntry,
    damaged_store_message,
    invalid_entries_message,
    scan_store,
)
from invincat_server.runtime.memory.staleness import EntryCheck, StalenessChecker
from invincat_server.runtime.memory.store import (
    CorruptStoreError,
    StoreState,
    salvage_entries,
    sha256_hex,
)
from invincat_server.runtime.memory.tamper import Fingerprint, TamperReport, TamperWatch
from invincat_server.runtime.memory.writer import StoreWriter

Build = Callable[[StoreState, BatchContext], Outcome]
WriterFactory = Callable[..., StoreWriter]
"""Makes the write seam from the scopes' files and `lock_timeout=`."""


def _check_scope(scope: str) -> Scope:
    if scope not in SCOPES:
        raise MemoryStoreError(f"Unknown memory scope {scope!r}: use 'user' or 'project'.")
    return scope


class MemoryService:
    """Governed user and project memory for one user dir and one project."""

    def __init__(
        self,
        home: Path,
        project_root: Path,
        *,
        limits: MemoryLimits | None = None,
        notify: Callable[[str], None] | None = None,
        writer: WriterFactory | None = None,
    ) -> None:
        """`notify` tells the user about a problem found by background work (injection,
        cleanup) that has no command to fail: called once per distinct message.
        `writer` makes the write seam (None: the JSON store files; backend.py chooses)."""
        self.home = Path(home)
        self.project_root = Path(project_root)
        self.limits = limits if limits is not None else load_limits(self.home)
        self.files = store_files(self.home, self.project_root)
        # Every store write and journal append goes through this seam (the tamper watch's
        # too): runtime/memory/writer.py.
        make = writer if writer is not None else StoreWriter
        self.writer = make(self.files, lock_timeout=self.limits.lock_timeout)
        self._problems: dict[Scope, str] = {}
        self._invalid: dict[Scope, list[BadEntry]] = {}
        self._notify = notify
        self._told: set[str] = set()
        self._cited: tuple[object, list[Entry]] | None = None
        self.renderer = InjectionRenderer(
            self.writer.change_key,
            self._injectable_entries,
            self.limits,
            check=self.check_entry,
        )
        self.guard = PathGuard(self.home, self.project_root)
        self.citations = CitationResolver(self.project_root, self.guard.is_protected)
        self.staleness = StalenessChecker(self.project_root, self.citations.refusal)
        self._watch = TamperWatch(self)
        self.attributor = Attributor(self.project_root)
        """Who this process's batches are by (self-asserted: shown, never trusted)."""

    # -- paths and reading ------------------------------------------------------

    def set_notify(self, notify: Callable[[str], None]) -> None:
        """Report background problems to `notify` from now on: the language server creates
        the service before the Session that then tells the user."""
        self._notify = notify

    def store_paths(self) -> dict[str, Path]:
        return {scope: files.store for scope, files in self.files.items()}

    def problems(self) -> dict[str, str]:
        """Scopes whose store could not be read or repaired, with what to do about it."""
        return {scope: problem for scope, problem in self._problems.items()}

    def invalid_entries(self, scope: str | None = None) -> list[BadEntry]:
        """Entries the last read of `scope` (or of every scope) skipped, and why."""
        scopes = SCOPES if scope is None else (_check_scope(scope),)
        return [bad for name in scopes for bad in self._invalid.get(name, [])]

    def _read_entries(self, scope: Scope) -> list[Entry]:
        """Entries of one scope without taking the lock (writes are atomic renames).

        Read-only whatever the bytes: a store that does not validate as a whole is read
        entry by entry (scan.py) and never backed up, reset or repaired here; that is a
        write's decision (`_load_locked`)."""
        store = self.writer.stores[scope]
        data = self.writer.read(scope)
        self._invalid.pop(scope, None)
        try:
            state = store.parse(data)
        except MergeConflictError as exc:
            self._problems[scope] = str(exc)
            raise  # no salvage: half of a conflict shown as the whole store would mislead
        except CorruptStoreError:
            return self._scan(scope, data or b"")
        except StoreUnavailableError as exc:
            self._problems[scope] = f"{store.files.store}: {exc}"
            return salvage_entries(data or b"", scope)
        self._problems.pop(scope, None)
        return list(state.entries.values())

    def _scan(self, scope: Scope, data: bytes) -> list[Entry]:
        """The valid entries of a store that does not validate as a whole; the others
        are kept in `_invalid`, damage outside the entries in `_problems`."""
        path = self.files[scope].store
        try:
            scan = scan_store(data, scope)
        except CorruptStoreError as exc:
            self._problems[scope] = damaged_store_message(path, scope, exc.problem)
            return []
        self._invalid[scope] = scan.bad
        if scan.problem is not None:
            self._problems[scope] = damaged_store_message(path, scope, scan.problem)
        else:
            self._problems.pop(scope, None)
        return scan.entries

    def _injectable_entries(self, scope: Scope) -> list[Entry]:
        """Entries for injection: a conflicted store contributes nothing, and says why."""
        try:
            return self._read_entries(scope)
        except MergeConflictError as exc:
            self._tell_once(scope, exc)
            return []

    def _tell_once(self, scope: Scope, exc: StoreUnavailableError) -> None:
        if isinstance(exc, InvalidEntriesError):
            message = f"{exc} Until then, nothing new is saved to {scope} memory."
        else:
            message = f"{exc} Until then, the agent works without {scope} memory."
        if self._notify is not None and message not in self._told:
            self._told.add(message)
            self._notify(message)

    def check_conflicts(self, scope: str | None = None) -> None:
        """Raise MergeConflictError if a store or journal (of `scope`, or any) is conflicted.

        Front ends call it before a command, so that a conflict is reported even by a
        command that would not have read the conflicted file.
        """
        for name in SCOPES if scope is None else (_check_scope(scope),):
            self.writer.check_journal(name)
            data = self.writer.read(name)
            if data is None:
                continue
            try:
                self.writer.stores[name].parse(data)
            except MergeConflictError:
                raise
            except (CorruptStoreError, StoreUnavailableError):
                pass  # other damage is the command's to handle, as without this check

    def show(self, entry_id: str) -> tuple[Entry | None, list[JournalRecord]]:
        """The entry (None once deleted) and every journal record that touched it."""
        scope = id_scope(entry_id)
        if scope is None:
            raise UnknownEntryError(f"{entry_id!r} is not a memory id ({ID_FORMS}).")
        entry = next((e for e in self._read_entries(scope) if e.id == entry_id), None)
        history = [r for r in self.writer.records(scope) if r.touches(entry_id)]
        return entry, history

    def log(self, scope: str | None = None, limit: int | None = None) -> list[JournalRecord]:
        """Journal records, newest first."""
        scopes = SCOPES if scope is None else (_check_scope(scope),)
        records = [r for s in scopes for r in self.writer.records(s)]
        records.sort(key=lambda r: r.time, reverse=True)
        return records if limit is None else records[:limit]

    def render_injection(self) -> str:
        return self.renderer.render()

    # -- citations and staleness ------------------------------------------------
    def check_entry(self, entry: Entry) -> EntryCheck | None:
        """The verdict on an entry's citations (None when it has none); cached by stat."""
        return self.staleness.check(entry.id, entry.citations)

    def verify(
        self, scope: str | None = None, *, include_archived: bool = False
    ) -> list[tuple[Entry, EntryCheck]]:
        """Every cited entry (active ones, archived too when asked) with its verdict."""
        found = []
        for entry in self.list(scope, include_archived=include_archived):
            verdict = self.check_entry(entry)
            if verdict is not None:
                found.append((entry, verdict))
        return found

    def _active_cited(self) -> list[Entry]:
        """Active project entries with citations; the store is re-read only when its file
        changed, so the check after every turn costs a stat per cited file."""
        key = self.writer.change_key("project")
        if self._cited is None or self._cited[0] != key:
            entries = self._read_entries("project") if key is not None else []
            self._cited = (key, [e for e in entries if e.status == "active" and e.citations])
        return self._cited[1]

    def _checked(self) -> list[tuple[Entry, EntryCheck]]:
        found = []
        for entry in self._active_cited():
            verdict = self.check_entry(entry)
            if verdict is not None:
                found.append((entry, verdict))
        return found

    def stale_entries(self) -> list[tuple[Entry, EntryCheck]]:
        """Active, valid entries whose cited evidence changed or is gone."""
        return [(e, v) for e, v in self._checked() if v.stale and e.invalid is None]

    def reanchor(self, actor: str = "reanchor") -> BatchReport | None:
        """Record moved citations at their new place, as one governed, journaled batch.

        Only entries whose every citation is fresh or moved: a stale entry keeps its
        citations as they were, for the memory agent (or a person) to decide on.
        """
        operations = []
        fields = {"path", "start_line", "end_line", "sha256", "anchor"}
        try:
            checked = self._checked()  # active only: an archived entry cannot be updated
        except MergeConflictError as exc:  # housekeeping waits for the person
            self._tell_once("project", exc)
            return None
        for entry, verdict in checked:
            if not verdict.moved or verdict.stale:
                continue
            operations.append(
                {
                    "op": "update",
                    "scope": "project",
                    "id": entry.id,
                    "citations": [
                        {k: v for k, v in c.to_json().items() if k in fields}
                        for c in verdict.reanchored()
                    ],
                    "reason": "; ".join(c.change or "" for c in verdict.checks if c.change),
                }
            )
        if not operations:
            return None
        try:
            return self.apply("project", {"operations": operations[:20]}, actor=actor)
        except (MergeConflictError, InvalidEntriesError) as exc:
            self._tell_once("project", exc)
            return None

    # -- governed writes --------------------------------------------------------
    def apply(
        self,
        scope: str,
        batch: dict[str, Any] | list[Any],
        *,
        actor: str = "cli",
        thread_id: str | None = None,
        anchor: str | None = None,
        cited_files: Iterable[str] | None = None,
    ) -> BatchReport:
        """Govern and apply a proposed batch; BatchShapeError if it is not a batch at all.

        `cited_files`: when given, citations may name only these files (the memory agent
        passes the files its run was shown).
        """
        name = _check_scope(scope)
        raw_ops = coerce_operations(batch)
        resolver = (
            self.citations if cited_files is None else self.citations.restricted_to(cited_files)
        )
        return self._transact(
            name,
            actor,
            lambda state, ctx: govern(raw_ops, state, ctx, self.limits, resolver),
            proposed=redact_deep(raw_ops),  # type: ignore[arg-type]
            thread_id=thread_id,
            anchor=anchor,
        )

    def _single(
        self, op: str, entry_id: str, reason: str, actor: str, **fields: Any
    ) -> BatchReport:
        scope = id_scope(entry_id)
        if scope is None:
            raise UnknownEntryError(f"{entry_id!r} is not a memory id ({ID_FORMS}).")
        item = {"op": op, "scope": scope, "id": entry_id, "reason": reason, **fields}
        return self.apply(scope, {"operations": [item]}, actor=actor)

    def archive(
        self, entry_id: str, reason: str, actor: str = "user", *, invalid: str | None = None
    ) -> BatchReport:
        extra = {"invalid": invalid} if invalid else {}
        return self._single("archive", entry_id, reason, actor, **extra)

    def restore(self, entry_id: str, reason: str, actor: str = "user") -> BatchReport:
        return self._single("restore", entry_id, reason, actor)

    def delete(self, entry_id: str, reason: str, actor: str = "user") -> BatchReport:
        return self._single("delete", entry_id, reason, actor)

    def revert(self, batch_id: str, *, actor: str = "user") -> BatchReport:
        """Restore the pre-batch content of what `batch_id` touched, as a new batch."""
        record = self._find_batch(batch_id)

        def build(state: StoreState, ctx: BatchContext) -> Outcome:
            cs = Changeset(state, ctx)
            plan_revert(record, cs)
            return cs.finish(self.limits)

        return self._transact(
            record.scope,
            actor,
            build,
            proposed=[{"op": "revert", "batch_id": batch_id}],
            reverts=batch_id,
        )

    def reverted_by(self, batch_id: str) -> str | None:
        """The batch whose revert of `batch_id` still stands (None: not reverted, or that
        revert was reverted in turn). UnknownBatchError for an id not in any journal."""
        record = self._find_batch(batch_id)
        records = self.writer.records(record.scope)
        return reverted_by(records, batch_id)

    def cleanup(self) -> list[BatchReport]:
        """Delete active entries marked invalid, in every scope (one batch per scope)."""
        reports = []
        for scope in SCOPES:
            if not self.writer.exists(scope):
                continue
            try:
                self.writer.check_may_write(scope, self.attributor.current)
                with self.writer.locked(scope):
                    state, _ = self._load_locked(scope)
                    record = self._cleanup_locked(scope, state)
            except (MergeConflictError, InvalidEntriesError) as exc:  # waits for the person
                self._tell_once(scope, exc)
                continue
            except ReadOnlyMemoryError:
                continue  # a reader's housekeeping is a writer's to do
            if record is not None:
                reports.append(record.report())
        return reports

    def _find_batch(self, batch_id: str) -> JournalRecord:
        """The batch's record, merged with the cleanup batch that followed it, if any."""
        for scope in SCOPES:
            records = self.writer.records(scope)
            for record in records:
                if record.batch_id == batch_id:
                    followers = [r for r in records if r.follows == batch_id]
                    return merge_followers(record, followers)
        raise UnknownBatchError(f"No journaled batch {batch_id!r}; see `invincat memory log`.")

    # -- the locked write path --------------------------------------------------
    def _transact(
        self,
        scope: Scope,
        actor: str,
        build: Build,
        *,
        proposed: list[Any],
        thread_id: str | None = None,
        anchor: str | None = None,
        reverts: str | None = None,
    ) -> BatchReport:
        # Before the lock: it may run `git config` once (attribution.py).
        who = self.attributor.current(with_branch=scope == "project")
        self.writer.check_may_write(scope, lambda: who)
        with self.writer.locked(scope):
            state, _ = self._load_locked(scope)
            ctx = BatchContext(
                new_batch_id(),
                scope,
                actor,
                now_iso(),
                thread_id,
                anchor,
                author=who.author(),
                branch=who.branch,
            )
            outcome = build(state, ctx)
            write = outcome.changed and not outcome.rejected
            if not write:
                outcome.state = state
            record = self.writer.commit(
                ctx, outcome, proposed, hash_before=state.hash, write=write, reverts=reverts
            )
            cleanup = self._cleanup_locked(scope, outcome.state, follows=ctx.batch_id)
        return record.report(cleanup.batch_id if cleanup else None)

    def _cleanup_locked(
        self, scope: Scope, state: StoreState, *, follows: str | None = None
    ) -> JournalRecord | None:
        """Delete active entries marked invalid, as a separate batch (actor `cleanup`).

        `follows` links it to the batch that set the markers, so reverting that batch
        also undoes the deletions it caused.
        """
        if not any(e.status == "active" and e.invalid for e in state.entries.values()):
            return None
        ctx = BatchContext(new_batch_id(), scope, "cleanup", now_iso())
        cs = Changeset(state, ctx)
        plan_cleanup(cs)
        outcome = cs.finish(self.limits, bounds=False)
        return self.writer.commit(
            ctx, outcome, [], hash_before=state.hash, write=True, follows=follows
        )

    def _load_locked(self, scope: Scope) -> tuple[StoreState, list[JournalRecord]]:
        """Re-read the store under the lock; repair corruption, journal external changes."""
        store = self.writer.stores[scope]
        try:
            # A conflicted journal or store is left for a person: no recovery, no append.
            self.writer.check_journal(scope)
            data = self.writer.read(scope)
            state = store.parse(data)
        except MergeConflictError as exc:
            self._problems[scope] = str(exc)
            raise
        except CorruptStoreError as exc:
            self._refuse_invalid_entries(scope, data or b"")
            return self._recover_locked(scope, data or b"", exc.problem)
        self._problems.pop(scope, None)
        record = self._accept_external_locked(scope, state)
        if record is None:
            return state, []
        return self.writer.journaled(scope) or state, [record]

    def _refuse_invalid_entries(self, scope: Scope, data: bytes) -> None:
        """InvalidEntriesError when only entries are bad: a fresh store would cost the
        valid ones too, and dropping the bad ones would delete someone's data; a person
        decides. Damage to the document itself goes on to recovery."""
        try:
            scan = scan_store(data, scope)
        except CorruptStoreError:
            return
        if scan.bad and scan.problem is None:
            message = invalid_entries_message(self.files[scope].store, scope, scan.bad)
            self._problems[scope] = message
            raise InvalidEntriesError(message)

    def _recover_locked(
        self, scope: Scope, data: bytes, problem: str
    ) -> tuple[StoreState, list[JournalRecord]]:
        """Back up the exact bytes first; only then start a fresh store."""
        files = self.files[scope]
        backup = self.writer.backup_target(scope, "corrupt")
        try:
            self.writer.save_backup(scope, backup, data)
        except OSError as exc:
            message = (
                f"Memory store {files.store} {problem}, and saving a copy to {backup} failed "
                f"({exc.strerror or exc}). The file was left untouched and memory changes are "
                f"disabled: fix it or move it away (e.g. `mv {files.store} "
                f"{files.store}.broken`), then retry."
            )
            self._problems[scope] = message
            raise StoreUnavailableError(message) from exc
        fresh = StoreState(scope)
        ctx = BatchContext(new_batch_id(), scope, "recovery", now_iso())
        outcome = Outcome(
            state=fresh,
            applied=[AppliedOp.of(op="recover", backup=backup)],
            reason=f"store {problem}; its exact bytes were saved to {Path(backup).name} and a "
            "fresh store was started",
        )
        record = self.writer.commit(ctx, outcome, [], hash_before=sha256_hex(data), write=True)
        return outcome.state, [record]

    def _accept_external_locked(self, scope: Scope, state: StoreState) -> JournalRecord | None:
        """Journal (actor `external`) a store that differs from the journal's last state."""
        last = self.writer.last_record(scope)
        last_hash = last.hash_after if last else None
        if state.hash == last_hash:
            self.writer.remember(scope, state)
            return None
        previous = self.writer.journaled(scope)
        if last_hash is None:
            previous = StoreState(scope)  # nothing journaled yet: the store was empty
        elif previous is None or previous.hash != last_hash:
            previous = None
        ctx = BatchContext(new_batch_id(), scope, "external", now_iso())
        cs = Changeset(state, ctx)
        plan_external(previous, cs)
        outcome = cs.finish(self.limits, bounds=False)
        outcome.reason = "the store changed outside governance; accepted after validation"
        outcome.state = state  # as found: accepting a change never rewrites the file
        return self.writer.commit(ctx, outcome, [], hash_before=last_hash, write=False)

    # -- tamper protection ------------------------------------------------------
    def fingerprint(self) -> Fingerprint:
        """Snapshot of both stores and journals, taken before a tool runs (nothing to take
        when they live in a database, which no tool reaches through the file system)."""
        if not self.writer.files_backed:
            return Fingerprint({}, {})
        return self._watch.fingerprint()

    def restore_if_tampered(self, before: Fingerprint) -> TamperReport | None:
        """After a tool ran: undo and quarantine store changes that bypassed governance."""
        if not self.writer.files_backed:
            return None
        return self._watch.restore_if_tampered(before)

    # Last in the class body, so `list[...]` annotations above still mean the builtin.
    def list(
        self, scope: str | None = None, *, include_archived: bool = False, tier: str | None = None
    ) -> list[Entry]:
        """Entries, user scope first, in store order; archived ones only when asked."""
        scopes = SCOPES if scope is None else (_check_scope(scope),)
        found = []
        for name in scopes:
            for entry in self._read_entries(name):
                if entry.status == "archived" and not include_archived:
                    continue
                if tier is not None and entry.tier != tier:
                    continue
                found.append(entry)
        return found
