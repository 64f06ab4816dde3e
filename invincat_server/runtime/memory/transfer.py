"""`invincat memory import|export`: move a scope between its JSON store files and the
memory database, losing nothing.

Both backends keep the same bytes (pg_writer.py), so a transfer copies the store document
as it is (ids, timestamps, attribution, citations, unknown fields) and every journal
record, then journals one record of its own (actor `import` or `export`) in the
destination, chained to the copied journal's last hash, so the destination's next write
sees no external change and `log` shows where the memory came from.

Refused whole, with nothing written, when the source does not validate (a corrupt store,
NUL bytes, wrong types, a conflicted or damaged journal line: a transfer that skipped a
line would not be lossless) or when the destination already holds memory of that scope
(merging two histories is not a copy; export to a fresh clone, or delete first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from invincat_server.runtime.memory import journal
from invincat_server.runtime.memory.changeset import BatchContext, Outcome, new_batch_id
from invincat_server.runtime.memory.errors import MemoryStoreError
from invincat_server.runtime.memory.models import SCOPES, Scope, now_iso
from invincat_server.runtime.memory.pg_writer import PgStoreWriter
from invincat_server.runtime.memory.report import AppliedOp, JournalRecord
from invincat_server.runtime.memory.store import CorruptStoreError, StoreState, atomic_write
from invincat_server.runtime.memory.writer import StoreWriter

if TYPE_CHECKING:
    from invincat_server.runtime.memory.service import MemoryService


class TransferError(MemoryStoreError):
    """The transfer was refused; nothing was written."""


@dataclass(frozen=True)
class Transferred:
    scope: Scope
    entries: int
    records: int
    batch_id: str


def _source(
    writer: StoreWriter, scope: Scope, where: str
) -> tuple[bytes, StoreState, list[JournalRecord]] | None:
    """The source's store bytes, parse and journal (None: it holds nothing)."""
    data = writer.read(scope)
    if data is None:
        return None
    try:
        state = writer.parse(scope, data)
    except CorruptStoreError as exc:
        raise TransferError(
            f"{scope} memory in {where} {exc.problem}; nothing was copied."
        ) from None
    records = _journal(writer, scope, where)
    return data, state, records


def _journal(writer: StoreWriter, scope: Scope, where: str) -> list[JournalRecord]:
    """Every journal record, refusing one that does not read (it would be lost)."""
    if isinstance(writer, PgStoreWriter):
        return writer.records(scope)
    files = writer.stores[scope].files
    writer.check_journal(scope)
    raw = journal.read_bytes_or_empty(files.journal, root=files.root)
    records = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        record = journal.parse_line(line)
        if record is None or record.scope != scope:
            raise TransferError(
                f"line {number} of {files.journal} is not a {scope} journal record; nothing "
                f"was copied from {where} (fix or remove that line first)."
            )
        records.append(record)
    return records


def _record(
    writer: StoreWriter, scope: Scope, actor: str, state: StoreState, records: list[JournalRecord]
) -> JournalRecord:
    """The transfer's own journal record, chained after the copied ones."""
    ctx = BatchContext(new_batch_id(), scope, actor, now_iso())
    outcome = Outcome(
        state=state,
        applied=[AppliedOp.of(op=actor, entries=len(state.entries), records=len(records))],
        reason=f"{actor}ed {len(state.entries)} entries and {len(records)} journal records",
    )
    before = records[-1].hash_after if records else None
    return writer.commit(ctx, outcome, [], hash_before=before, write=False)


def import_to_database(files: StoreWriter, db: PgStoreWriter, scope: Scope) -> Transferred:
    """Copy `scope` from its JSON store files into the (empty) database namespace."""
    where = str(files.stores[scope].files.store)
    found = _source(files, scope, where)
    if found is None:
        raise TransferError(f"There is no {scope} memory in {where} to import.")
    data, state, records = found
    with db.locked(scope):
        if not db.is_empty(scope):
            raise TransferError(
                f"The database already holds {scope} memory for {db.namespaces[scope]}; "
                "nothing was imported (import only into an empty namespace)."
            )
        db.load_locked(scope, data, records)
        mine = _record(db, scope, "import", state, records)
    return Transferred(scope, len(state.entries), len(records), mine.batch_id)


def export_to_files(db: PgStoreWriter, files: StoreWriter, scope: Scope) -> Transferred:
    """Copy `scope` from the database namespace into its (absent) JSON store files."""
    found = _source(db, scope, f"the database ({db.namespaces[scope]})")
    if found is None:
        raise TransferError(f"There is no {scope} memory for {db.namespaces[scope]} to export.")
    data, state, records = found
    target = files.stores[scope].files
    with files.locked(scope):
        if files.read(scope) is not None or files.last_record(scope) is not None:
            raise TransferError(
                f"{target.store} (or its journal) already exists; nothing was exported "
                "(move it away first, or import it instead)."
            )
        for record in records:  # the journal first: a store without it would be "external"
            journal.append(target.journal, record, root=target.root)
        atomic_write(target.store, data, root=target.root)
        files.stores[scope].wrote(state, data)
        mine = _record(files, scope, "export", state, records)
    return Transferred(scope, len(state.entries), len(records), mine.batch_id)


def transfer(
    service: MemoryService, direction: str, scope: Scope | None = None
) -> list[Transferred]:
    """`import` (JSON files -> database) or `export` (database -> JSON files) of `scope`,
    or of every scope that holds memory in the source. TransferError when the service is
    not on the database, or nothing could be copied."""
    db = service.writer
    if not isinstance(db, PgStoreWriter):
        raise TransferError(
            f"memory {direction} needs the database: set INVINCAT_DATABASE_URL "
            "(or database_url in config.toml)."
        )
    files = StoreWriter(service.files, lock_timeout=service.limits.lock_timeout)
    source = files if direction == "import" else db
    scopes = SCOPES if scope is None else (scope,)
    wanted = [s for s in scopes if scope is not None or source.read(s) is not None]
    if not wanted:
        raise TransferError(f"There is no memory to {direction}.")
    if direction == "import":
        return [import_to_database(files, db, name) for name in wanted]
    return [export_to_files(db, files, name) for name in wanted]
