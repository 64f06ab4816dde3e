"""The memory write seam on PostgreSQL (`database_url` set): StoreWriter, rows for files.

Each scope is one row of `invincat_memory_stores`, keyed by its namespace
(repository.py: `project:github.com/a/b`, `user:alice`), holding the store document
byte for byte as the JSON store would be written (store.dump_state), and its journal is
rows of `invincat_memory_journal` holding the journal's JSON lines. Keeping the same bytes
keeps everything above the seam the same code: parsing, hashes, the journal's hash chain,
revert, external changes, export and import (transfer.py) are lossless by construction.

`locked(scope)` is a transaction holding the namespace row `FOR UPDATE`; the store read,
the store write, the journal append and the change notification (`pg_notify`, delivered
at commit: pg_changes.py) happen in it, so a batch is all there or not there, also when
the process is killed mid-batch, and no batch is applied to a state read before the lock.

Access: a role with only SELECT can read but `locked` fails on the row lock, before
anything is applied: `ReadOnlyMemoryError`. `[memory] writers` (backend.py) refuses
project batches by authors not listed, before the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.database import DatabaseUnavailableError, connect, scrub
from invincat_server.runtime.database_url import redacted
from invincat_server.runtime.memory import journal
from invincat_server.runtime.memory.errors import (
    LockTimeoutError,
    MemoryDatabaseUnavailableError,
    MemoryStoreError,
    ReadOnlyMemoryError,
    StoreUnavailableError,
)
from invincat_server.runtime.memory.models import Scope
from invincat_server.runtime.memory.paths import StoreFiles
from invincat_server.runtime.memory.report import JournalRecord
from invincat_server.runtime.memory.store import Store, StoreState, sha256_hex
from invincat_server.runtime.memory.writer import StoreWriter

if TYPE_CHECKING:
    import psycopg

    from invincat_server.runtime.memory.attribution import Attribution

CHANNEL = "invincat_memory"
"""The `LISTEN` channel every commit notifies (payload: pg_changes.encode_notice)."""

_SCHEMA_LOCK = 0x1A7C_A700
"""Advisory lock key: two processes creating the tables at once would collide."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS invincat_memory_stores (
    namespace text PRIMARY KEY,
    scope text NOT NULL CHECK (scope IN ('user', 'project')),
    doc bytea,
    hash text,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS invincat_memory_journal (
    namespace text NOT NULL REFERENCES invincat_memory_stores (namespace),
    seq bigserial,
    batch_id text NOT NULL,
    record text NOT NULL,
    PRIMARY KEY (namespace, seq)
);
CREATE TABLE IF NOT EXISTS invincat_memory_backups (
    namespace text NOT NULL,
    kind text NOT NULL,
    made_at timestamptz NOT NULL DEFAULT now(),
    data bytea NOT NULL
);
"""


def read_only(scope: str, why: str) -> ReadOnlyMemoryError:
    return ReadOnlyMemoryError(
        f"read-only: not allowed to write {scope} memory ({why}); nothing was changed."
    )


def ensure_schema(conn: psycopg.Connection[Any]) -> None:
    """Create the tables once (a role that may not create them but finds them is fine)."""
    row = conn.execute(
        "SELECT to_regclass('invincat_memory_stores') IS NOT NULL"
        " AND to_regclass('invincat_memory_journal') IS NOT NULL"
        " AND to_regclass('invincat_memory_backups') IS NOT NULL"
    ).fetchone()
    if row is not None and row[0]:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        conn.execute(SCHEMA)  # a constant: several statements, no parameters


class PgStoreWriter(StoreWriter):
    """StoreWriter whose stores and journals are rows of one PostgreSQL database."""

    files_backed = False

    def __init__(
        self,
        files: dict[Scope, StoreFiles],
        *,
        lock_timeout: float,
        url: str,
        namespaces: dict[Scope, str],
        writers: frozenset[str] | None = None,
    ) -> None:
        super().__init__(files, lock_timeout=lock_timeout)
        self.url = url
        self.lock_timeout = lock_timeout
        self.namespaces = dict(namespaces)
        self.writers = writers
        # One connection per service; the mutex keeps one thread's transaction from
        # interleaving with another's statements (the service runs in worker threads).
        self._mutex = threading.RLock()
        self._conn: psycopg.Connection[Any] | None = None
        try:
            with self._statement("project") as conn:  # its errors as memory errors
                ensure_schema(conn)
        except ReadOnlyMemoryError:
            raise StoreUnavailableError(
                f"The memory tables are missing in {redacted(url)} and this database role may "
                "not create them: connect once with a role that has CREATE on the schema (or "
                "have its owner run invincat once), then retry."
            ) from None

    # -- connection -------------------------------------------------------------------
    def _connection(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            try:
                conn = self._conn = connect(self.url)
            except DatabaseUnavailableError as exc:
                raise MemoryDatabaseUnavailableError(str(exc)) from None
        return conn

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _failure(self, scope: Scope, exc: Exception) -> MemoryStoreError:
        import psycopg

        first = scrub(str(exc).strip().splitlines()[0] if str(exc).strip() else "", self.url)
        if isinstance(exc, psycopg.errors.InsufficientPrivilege):
            return read_only(scope, f"the database role has no right to change it: {first}")
        if isinstance(exc, psycopg.errors.LockNotAvailable):
            return LockTimeoutError(
                f"Another process held {scope} memory in {redacted(self.url)} for more "
                f"than {self.lock_timeout:g} s; nothing was changed. Retry."
            )
        return StoreUnavailableError(
            f"{scope} memory in {redacted(self.url)} is unavailable ({type(exc).__name__}: "
            f"{first}); nothing was changed."
        )

    @contextmanager
    def _statement(self, scope: Scope) -> Iterator[psycopg.Connection[Any]]:
        """The connection for reads, with the driver's errors as memory errors."""
        import psycopg

        with self._mutex:
            try:
                yield self._connection()
            except psycopg.Error as exc:
                raise self._failure(scope, exc) from None

    # -- the seam ---------------------------------------------------------------------
    @contextmanager
    def locked(self, scope: Scope) -> Iterator[Store]:
        """A transaction holding `scope`'s namespace row FOR UPDATE (waits for another
        process's batch up to lock_timeout; a read-only role is refused here)."""
        import psycopg

        namespace = self.namespaces[scope]
        with self._mutex:
            conn = self._connection()
            try:
                with conn.transaction():
                    conn.execute(
                        "SELECT set_config('lock_timeout', %s, true)",
                        (f"{int(self.lock_timeout * 1000)}ms",),
                    )
                    if not self._lock_row(conn, namespace):
                        conn.execute(
                            "INSERT INTO invincat_memory_stores (namespace, scope)"
                            " VALUES (%s, %s) ON CONFLICT DO NOTHING",
                            (namespace, scope),
                        )
                        self._lock_row(conn, namespace)
                    yield self.stores[scope]
            except psycopg.Error as exc:
                raise self._failure(scope, exc) from None

    @staticmethod
    def _lock_row(conn: psycopg.Connection[Any], namespace: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM invincat_memory_stores WHERE namespace = %s FOR UPDATE",
            (namespace,),
        ).fetchone()
        return row is not None

    def change_feed(self) -> tuple[str, dict[Scope, str]] | None:
        return self.url, dict(self.namespaces)

    def check_may_write(self, scope: Scope, who: Callable[[], Attribution]) -> None:
        if scope != "project" or self.writers is None:
            return
        author = who()
        names = {v.casefold() for v in (author.name, author.email) if v}
        if not names & self.writers:
            shown = author.name or "an author without a name"
            raise read_only(scope, f"{shown} is not listed in [memory] writers")

    def read(self, scope: Scope) -> bytes | None:
        with self._statement(scope) as conn:
            row = conn.execute(
                "SELECT doc FROM invincat_memory_stores WHERE namespace = %s",
                (self.namespaces[scope],),
            ).fetchone()
        return bytes(row[0]) if row is not None and row[0] is not None else None

    def exists(self, scope: Scope) -> bool:
        return self.change_key(scope) is not None

    def change_key(self, scope: Scope) -> object:
        with self._statement(scope) as conn:
            row = conn.execute(
                "SELECT hash FROM invincat_memory_stores WHERE namespace = %s",
                (self.namespaces[scope],),
            ).fetchone()
        return row[0] if row is not None else None

    def records(self, scope: Scope) -> list[JournalRecord]:
        with self._statement(scope) as conn:
            rows = conn.execute(
                "SELECT record FROM invincat_memory_journal WHERE namespace = %s ORDER BY seq",
                (self.namespaces[scope],),
            ).fetchall()
        return [r for r in (journal.parse_line(row[0].encode("utf-8")) for row in rows) if r]

    def last_record(self, scope: Scope) -> JournalRecord | None:
        with self._statement(scope) as conn:
            rows = conn.execute(
                "SELECT record FROM invincat_memory_journal WHERE namespace = %s"
                " ORDER BY seq DESC LIMIT 16",
                (self.namespaces[scope],),
            ).fetchall()
        for row in rows:  # rows are written whole; a hand-damaged one is skipped
            record = journal.parse_line(row[0].encode("utf-8"))
            if record is not None:
                return record
        return None

    def check_journal(self, scope: Scope) -> None:
        """Rows hold no git conflict markers: nothing to check."""

    def backup_target(self, scope: Scope, kind: str) -> str:
        return f"invincat_memory_backups row ({kind}, {self.namespaces[scope]})"

    def save_backup(self, scope: Scope, target: str, data: bytes) -> None:
        kind = target.split("(", 1)[1].split(",", 1)[0]
        with self._statement(scope) as conn:
            conn.execute(
                "INSERT INTO invincat_memory_backups (namespace, kind, data) VALUES (%s, %s, %s)",
                (self.namespaces[scope], kind, data),
            )

    def _write_locked(self, scope: Scope, state: StoreState) -> str:
        store = self.stores[scope]
        data = store.encode(state)
        with self._statement(scope) as conn:
            conn.execute(
                "UPDATE invincat_memory_stores SET doc = %s, hash = %s, updated_at = now()"
                " WHERE namespace = %s",
                (data, sha256_hex(data), self.namespaces[scope]),
            )
        return store.wrote(state, data)

    def _append_locked(self, scope: Scope, record: JournalRecord) -> None:
        from invincat_server.runtime.memory.pg_changes import encode_notice

        line = journal.encode(record).decode("utf-8").rstrip("\n")
        namespace = self.namespaces[scope]
        with self._statement(scope) as conn:
            conn.execute(
                "INSERT INTO invincat_memory_journal (namespace, batch_id, record)"
                " VALUES (%s, %s, %s)",
                (namespace, record.batch_id, line),
            )
            conn.execute(
                "SELECT pg_notify(%s, %s)",
                (CHANNEL, encode_notice(namespace, scope, record.batch_id)),
            )

    # -- transfer (transfer.py) -------------------------------------------------------
    def is_empty(self, scope: Scope) -> bool:
        """No store document and no journal rows for `scope`'s namespace."""
        with self._statement(scope) as conn:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM invincat_memory_stores"
                "        WHERE namespace = %s AND doc IS NOT NULL)"
                " + (SELECT count(*) FROM invincat_memory_journal WHERE namespace = %s)",
                (self.namespaces[scope], self.namespaces[scope]),
            ).fetchone()
        return row is not None and row[0] == 0

    def load_locked(self, scope: Scope, data: bytes, records: list[JournalRecord]) -> str:
        """Put an imported store (bytes as they are) and its journal in place; the caller
        holds `locked(scope)` and checked `is_empty`. Returns the store's hash."""
        state = self.stores[scope].parse(data)
        namespace = self.namespaces[scope]
        with self._statement(scope) as conn:
            conn.execute(
                "UPDATE invincat_memory_stores SET doc = %s, hash = %s, updated_at = now()"
                " WHERE namespace = %s",
                (data, state.hash, namespace),
            )
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO invincat_memory_journal (namespace, batch_id, record)"
                    " VALUES (%s, %s, %s)",
                    [
                        (namespace, r.batch_id, journal.encode(r).decode("utf-8").rstrip("\n"))
                        for r in records
                    ],
                )
        self.stores[scope].wrote(state, data)
        return state.hash or ""
