"""Errors of the memory store; every message says what happened and what to do."""

from __future__ import annotations

from invincat_server.runtime.database import DatabaseUnavailableError


class MemoryStoreError(Exception):
    """Base class: a memory request that cannot be carried out."""


class MemoryConfigError(MemoryStoreError):
    """`[memory]` in config.toml is unusable."""


class BatchShapeError(MemoryStoreError):
    """The input is not `{"operations": [...]}` (or a bare list of operations)."""


class StoreUnavailableError(MemoryStoreError):
    """A store cannot be written (corrupt and not backed up, newer format, I/O error).

    The file is left exactly as it was; reads may still work.
    """


class MemoryDatabaseUnavailableError(StoreUnavailableError, DatabaseUnavailableError):
    """The memory database (`database_url`) could not be reached or refused us; the
    message names it redacted.

    Both kinds at once: memory's callers treat it as any store they cannot use (told
    once, retried later), while a front end opening a project reports it exactly as the
    threads' store reports the same database being down: one line, no traceback, in
    whichever order the two happen to open it.
    """


class MergeConflictError(StoreUnavailableError):
    """A store or journal was left conflicted by git (markers, or one id twice).

    Unlike a corrupt store it is never backed up and replaced, nor read half-way: every
    operation on that scope refuses until a person resolves it. `path` is the file.
    """

    def __init__(self, message: str, path: object) -> None:
        super().__init__(message)
        self.path = path


class UnsafeStoreError(MergeConflictError):
    """A store, journal or lock, or the folder holding them, is a symlink, a special file
    or hard-linked (runtime/private_files.py refused it). Handled like a conflict on
    purpose: nothing of that scope is read or written, every command on it fails with the
    path and the way out, and chat goes on without it, saying why once."""


def unsafe_store(exc: OSError) -> UnsafeStoreError:
    """The memory error for a refused state path (`exc` is an UnsafePathError)."""
    return UnsafeStoreError(str(exc), getattr(exc, "path", exc.filename))


class LockTimeoutError(MemoryStoreError):
    """Another process held the store lock for too long."""


class ReadOnlyMemoryError(MemoryStoreError):
    """This user or database role may read but not change the scope's memory
    (runtime/memory/pg_writer.py): refused before anything is applied."""


class UnknownEntryError(MemoryStoreError):
    """No entry (and no journal history) for this id."""


class UnknownBatchError(MemoryStoreError):
    """No journal record for this batch id."""


class InvalidEntriesError(StoreUnavailableError):
    """A store whose document is sound but some entries do not validate (a hand edit, a
    pull). Reads skip those entries; writes refuse, leaving the file as it is, until a
    person fixes or removes them: a rewrite would have to drop someone's entry."""
