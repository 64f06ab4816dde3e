"""The store change feed: every change of a memory store, whoever made it, as one
`StoreChange` to each subscriber (the language server turns them into
`invincat/memory/didChange`; any front end can subscribe).

The user store is the same file for every project and is watched once, so a user-memory
change is one event, not one per project; a project-scope event names the project root.

Three sources of change, one event each:

- a front end's own writes (a memory apply or revert): `changed()` right after the
  batch is written, with its batch id;
- a turn's background memory work: its `memory_changed` events (front ends forward them to
  `changed()`);
- anything else (`invincat memory archive …` in a terminal, another editor window, the
  session's own cleanup, a hand edit): a poll of the store and journal files' stat every
  second. A cheap poll needs no dependency and works on every platform and filesystem;
  inotify would save four `stat` calls a second.

With memory in PostgreSQL (`database_url`) the files are not where changes land: the
database announces each commit (runtime/memory/pg_changes.py, `LISTEN`), and
`follow_database` turns those notices, from any process on any machine, into the same
`StoreChange`s.

Every governed change appends one journal line per batch, so a batch id names a change;
ids already announced are not announced again, which keeps the poll and `changed()` from
double-reporting a change both saw. A store that changed with no new journal line (edited
by hand) is announced with `batch_id` None once it has been stable for a whole poll
interval: governance writes the store a moment before its journal line, and that moment
must not look like a hand edit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from invincat_server.runtime.project.listeners import Listeners

if TYPE_CHECKING:
    from invincat_server.runtime.memory import JournalRecord
    from invincat_server.runtime.memory.models import Scope
    from invincat_server.runtime.memory.paths import StoreFiles
    from invincat_server.runtime.memory.pg_changes import ChangeNotice, ChangeWatcher

log = logging.getLogger("invincat.memory.watch")

POLL_SECONDS = 1.0
_SEEN_PER_SCOPE = 256
"""Batch ids remembered per scope; far more than can change between two polls."""

Stat = tuple[int, int, int] | None
"""(inode, size, mtime_ns) of a file, None when it does not exist."""


def _stat(path: Path) -> Stat:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class _Watched:
    """What the poll last accepted for one scope."""

    scope: str
    store: Path
    journal: Path
    root: Path | None
    """The project root of a project store; None for the user store."""
    store_stat: Stat = None
    journal_stat: Stat = None
    journal_offset: int = 0
    """End of the last complete journal line read; new records start here."""
    unjournaled: Stat = None
    """Store stat seen changed without a journal line (re-checked on the next poll)."""
    seen: deque[str] = field(default_factory=lambda: deque(maxlen=_SEEN_PER_SCOPE))

    @property
    def anchor(self) -> Path:
        """Where the no-follow walk to the files starts (as StoreFiles.root)."""
        return self.store.parent if self.root is None else self.store.parent.parent


def _read_new_records(path: Path, offset: int, anchor: Path) -> tuple[list[JournalRecord], int]:
    """Journal records appended after `offset`, and the offset after the last complete
    line (a line being written is read on the next poll). No link is followed below
    `anchor` (a journal linked to another project's is not ours to announce)."""
    from invincat_server.runtime import private_files
    from invincat_server.runtime.memory.journal import parse_lines

    try:
        with os.fdopen(private_files.open_file(path, os.O_RDONLY, root=anchor), "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size < offset:  # replaced or truncated: only what comes next is new
                return [], size
            fh.seek(offset)
            data = fh.read(size - offset)
    except FileNotFoundError:
        return [], 0
    end = data.rfind(b"\n") + 1
    return parse_lines(data[:end]), offset + end


def _journaled_hash(journal: Path, anchor: Path) -> str | None:
    from invincat_server.runtime.memory.journal import last_record

    record = last_record(journal, root=anchor)
    return record.hash_after if record else None


def _store_hash(store: Path, anchor: Path) -> str | None:
    from invincat_server.runtime.memory.store import read_bytes, sha256_hex

    data = read_bytes(store, root=anchor)
    return sha256_hex(data) if data is not None else None


def _changes_store(record: JournalRecord) -> bool:
    return not record.rejected and record.hash_before != record.hash_after


@dataclass(frozen=True)
class StoreChange:
    """`scope`'s store changed: in batch `batch_id` (None: edited outside governance);
    `root` is the project root of a project store, None for the user store."""

    scope: str
    batch_id: str | None
    root: Path | None


class StoreWatch:
    """The watched stores of this process and their change feed (`changes`)."""

    def __init__(self) -> None:
        self.changes: Listeners[StoreChange] = Listeners("memory store change")
        self._watched: dict[Path, _Watched] = {}
        """By store file: the user store once, each open project's store."""
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._listeners: dict[str, ChangeWatcher] = {}
        """One LISTEN connection per database URL."""
        self._namespaces: dict[str, tuple[str, Path | None]] = {}
        """Database namespace -> (scope, project root or None for the user's)."""
        self._seen_db: deque[str] = deque(maxlen=_SEEN_PER_SCOPE * 2)

    # watching -------------------------------------------------------------------------
    def watch(self, stores: Iterable[StoreFiles], root: Path) -> None:
        """Begin polling these store files of the project at `root` (files already watched
        stay as they are): the quick memory reads call it too, so an editor hears of
        changes before any MemoryService exists."""
        if self._closed:
            return
        for files in stores:
            scope = files.scope
            if files.store in self._watched:
                continue
            watched = _Watched(scope, files.store, files.journal, root if scope != "user" else None)
            watched.store_stat = _stat(files.store)
            watched.journal_stat = _stat(files.journal)
            watched.journal_offset = watched.journal_stat[1] if watched.journal_stat else 0
            self._watched[files.store] = watched
        if self._task is None:
            self._task = asyncio.create_task(self._poll_forever(), name="invincat-memory-watch")

    def forget(self, root: Path) -> None:
        """The project at `root` closed: stop watching its project store."""
        for store, watched in list(self._watched.items()):
            if watched.root == root:
                del self._watched[store]
        for namespace, (_scope, where) in list(self._namespaces.items()):
            if where == root:
                del self._namespaces[namespace]

    def follow_database(
        self, url: str, namespaces: Mapping[Scope, str], root: Path
    ) -> ChangeWatcher | None:
        """Announce the commits to these namespaces (scope -> namespace) of the memory
        database at `url`, the project at `root`'s, whoever makes them. Call on the loop.
        Returns the database's watcher (None once closed); `listening` is set once it
        hears."""
        if self._closed:
            return None
        for scope, namespace in namespaces.items():
            self._namespaces[namespace] = (scope, None if scope == "user" else root)
        if url not in self._listeners:
            from invincat_server.runtime.memory.pg_changes import watch_changes

            loop = asyncio.get_running_loop()

            def hand_over(notice: ChangeNotice) -> None:
                loop.call_soon_threadsafe(self._heard, notice)

            self._listeners[url] = watch_changes(url, hand_over)
        return self._listeners[url]

    def _heard(self, notice: ChangeNotice) -> None:
        if notice.batch_id is None and not notice.namespace:  # (re)listening: maybe missed
            for scope, where in set(self._namespaces.values()):
                if scope == notice.scope:
                    self._notify(scope, None, where)
            return
        known = self._namespaces.get(notice.namespace)
        if known is None:
            return  # another project's memory
        scope, where = known
        batch_id = notice.batch_id
        if batch_id is not None:
            if batch_id in self._seen_db:
                return
            self._seen_db.append(batch_id)
        self._notify(scope, batch_id, where)

    async def close(self) -> None:
        self._closed = True
        listeners, self._listeners = list(self._listeners.values()), {}
        for listener in listeners:
            await asyncio.to_thread(listener.stop)
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def changed(self, scope: str, batch_ids: list[str | None], root: Path) -> None:
        """This process changed `scope` of the project at `root` in the batches
        `batch_ids` (the first is the one announced; a cleanup batch that followed it may
        come next)."""
        project = None if scope == "user" else root
        watched = next(
            (w for w in self._watched.values() if w.scope == scope and w.root == project), None
        )
        ids = [batch_id for batch_id in batch_ids if batch_id]
        if self._namespaces:  # the database will announce it too
            if any(batch_id in self._seen_db for batch_id in ids):
                return
            self._seen_db.extend(ids)
        if watched is not None:
            if any(batch_id in watched.seen for batch_id in ids):
                return  # the poll saw this change first and announced it
            watched.seen.extend(ids)
        self._notify(scope, ids[0] if ids else None, project)

    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            for watched in list(self._watched.values()):
                try:
                    await self._poll(watched)
                except Exception:  # a bad poll must not stop the next ones
                    log.exception("checking the %s memory store for changes failed", watched.scope)

    async def _poll(self, w: _Watched) -> None:
        store_stat, journal_stat = _stat(w.store), _stat(w.journal)
        if store_stat == w.store_stat and journal_stat == w.journal_stat:
            w.unjournaled = None
            return
        records: list[JournalRecord] = []
        if journal_stat != w.journal_stat:
            records, w.journal_offset = await asyncio.to_thread(
                _read_new_records, w.journal, w.journal_offset, w.anchor
            )
        changing = [r for r in records if _changes_store(r)]
        # Several batches since the last poll are one refresh for the editor: announce
        # the latest, unless this process already did (then the editor's refresh after
        # it saw the earlier ones too).
        latest = changing[-1].batch_id if changing else None
        announced = latest in w.seen
        w.seen.extend(r.batch_id for r in records)
        if changing or store_stat == w.store_stat:
            # Journaled changes, or journal lines that changed nothing (a rejected batch).
            w.store_stat, w.journal_stat, w.unjournaled = store_stat, journal_stat, None
            if latest is not None and not announced:
                self._notify(w.scope, latest, w.root)
            return
        # The store changed and the journal says nothing about it (yet).
        w.journal_stat = journal_stat
        if w.unjournaled != store_stat:
            w.unjournaled = store_stat  # maybe governance between its two writes: wait
            return
        w.store_stat, w.unjournaled = store_stat, None
        journaled, current = await asyncio.gather(
            asyncio.to_thread(_journaled_hash, w.journal, w.anchor),
            asyncio.to_thread(_store_hash, w.store, w.anchor),
        )
        if journaled != current:
            self._notify(w.scope, None, w.root)  # edited outside governance

    def _notify(self, scope: str, batch_id: str | None, root: Path | None) -> None:
        if not self._closed:
            self.changes.emit(StoreChange(scope, batch_id, root))
