"""One store file on disk: paths, parsing, the cross-process lock, atomic writes, backups.

Durability rules (spec sections 4.7 and 9):
- writers hold an exclusive `flock` on `memory_<scope>.lock` and re-read the store under
  it, so no batch is applied to a snapshot another process has since replaced;
- a write goes to a temp file in the same directory, is fsynced, `os.replace`d over the
  store and the directory is fsynced: a crash leaves either the old or the new file;
- every file is opened through runtime/private_files.py: 0600, and no symlink followed
  below the project root (a `.invincat` or store linked elsewhere is refused);
- an unreadable store is copied byte for byte to a backup *before* anything replaces it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from invincat_server.runtime import private_files
from invincat_server.runtime.data_dir import ensure_data_dir
from invincat_server.runtime.memory.conflicts import (
    conflict_marker_line,
    duplicate_id,
    store_conflict,
)
from invincat_server.runtime.memory.errors import (
    LockTimeoutError,
    StoreUnavailableError,
    unsafe_store,
)
from invincat_server.runtime.memory.ids import sort_key
from invincat_server.runtime.memory.models import (
    STORE_VERSION,
    Entry,
    Scope,
    StoreDoc,
)
from invincat_server.runtime.memory.paths import StoreFiles
from invincat_server.runtime.policy import file_lock


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class StoreState:
    """A parsed store. Entries are frozen models, so copies share them safely."""

    scope: Scope
    entries: dict[str, Entry] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    """Unknown top-level keys, written back unchanged."""
    hash: str | None = None
    """sha256 of the bytes this state was read from or written as; None: no file."""

    def copy(self) -> StoreState:
        return StoreState(self.scope, dict(self.entries), dict(self.extra), self.hash)

    def count(self, status: str) -> int:
        return sum(1 for e in self.entries.values() if e.status == status)


class CorruptStoreError(Exception):
    """The bytes are not a valid store; `problem` says how."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def _schema_problem(exc: ValidationError) -> str:
    # loc + msg only: never echo input values (they could hold anything).
    parts = []
    for err in exc.errors(include_input=False, include_url=False)[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "top level"
        parts.append(f"{loc}: {str(err['msg']).removeprefix('Value error, ')}")
    return "does not match the store schema (" + "; ".join(parts) + ")"


def _state_from(doc: StoreDoc, data: bytes) -> StoreState:
    # In file order: a read shows the store as it is; a write puts it in id order.
    entries = {entry.id: entry for entry in doc.items}
    return StoreState(doc.scope, entries, dict(doc.model_extra or {}), sha256_hex(data))


def load_json(data: bytes) -> Any:
    """The document, or CorruptStoreError (also for nesting or numbers json refuses)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptStoreError(f"is not valid UTF-8 (byte {exc.start})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptStoreError(f"is not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    except RecursionError as exc:
        raise CorruptStoreError("is not readable JSON (it nests too deeply)") from exc
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise CorruptStoreError(f"is not readable JSON ({exc})") from exc


def parse_store(data: bytes, scope: Scope) -> StoreState:
    """Parse and validate store bytes; raise CorruptStoreError or StoreUnavailableError."""
    try:
        # Fast path: pydantic's own JSON parser, about 3x faster than json + validate.
        doc = StoreDoc.model_validate_json(data)
    except ValidationError:
        pass  # the slow path below says precisely what is wrong
    else:
        if doc.scope == scope:
            return _state_from(doc, data)
    raw = load_json(data)
    if not isinstance(raw, dict):
        raise CorruptStoreError("is not a JSON object")
    version = raw.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > STORE_VERSION:
        # A newer invincat wrote it: resetting would destroy its data, so refuse to write.
        raise StoreUnavailableError(
            f"store format version {version} is newer than this invincat understands "
            f"({STORE_VERSION}); upgrade invincat to change memory"
        )
    if raw.get("scope") != scope:
        found = raw.get("scope")
        shown = found if isinstance(found, str) and len(found) <= 40 else type(found).__name__
        raise CorruptStoreError(f"has scope {shown!r}, expected {scope!r}")
    try:
        doc = StoreDoc.model_validate(raw)
    except ValidationError as exc:
        raise CorruptStoreError(_schema_problem(exc)) from exc
    return _state_from(doc, data)


def salvage_entries(data: bytes, scope: Scope) -> list[Entry]:
    """The entries that still validate in a store that does not (read-only listing)."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError is one
        return []
    items = raw.get("items") if isinstance(raw, dict) else None
    found: list[Entry] = []
    for item in items if isinstance(items, list) else []:
        try:
            entry = Entry.model_validate(item)
        except ValidationError:
            continue
        if entry.scope == scope:
            found.append(entry)
    return found


def duplicate_id_in(data: bytes) -> str | None:
    """The first entry id that occurs twice in (otherwise parseable) store JSON."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError is one
        return None
    items = raw.get("items") if isinstance(raw, dict) else None
    seen: set[str] = set()
    for item in items if isinstance(items, list) else []:
        entry_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(entry_id, str):
            if entry_id in seen:
                return entry_id
            seen.add(entry_id)
    return None


LineCache = dict[int, tuple[Entry, bytes]]


def in_store_order(entries: dict[str, Entry]) -> dict[str, Entry]:
    """`entries` in the order a store file keeps them: by id (ids.sort_key), numbered ids
    first, then the others by time. Two clones holding the same entries write the same
    bytes, and a new entry goes after the older ones instead of wherever it was added."""
    return {entry_id: entries[entry_id] for entry_id in sorted(entries, key=sort_key)}


def dump_state(state: StoreState, cache: LineCache | None = None) -> bytes:
    """Serialise a store in its one layout (docs/memory.md, "Layout"):

    ```
    {
      "version": 2,
      "scope": "project",
      "items": [
        {"id":"mem_p_000001",...}
      , {"id":"mem_p_01kbx...",...}
      ]
    }
    ```

    Known keys first, then unknown top-level keys as they came, then `items`, in id
    order, one entry per line (its JSON compact, fields in the model's order, unknown
    fields after them), and a final newline. The comma goes first on a line, so adding an
    entry at the end (where new ids sort) or anywhere else adds a line and changes none:
    `git diff` shows an addition as one added line, a change to one entry merges with an
    addition on another branch unless they are neighbours, and keeping both sides of two
    additions is deleting git's marker lines.

    Entries are frozen, so the encoded JSON of an unchanged entry object can be reused
    from `cache` (keyed by object identity, checked with `is`); the cache is refilled
    with exactly the current entries.
    """
    old = cache if cache is not None else {}
    fresh: LineCache = {}
    encoded = []
    for entry in in_store_order(state.entries).values():
        hit = old.get(id(entry))
        if hit is not None and hit[0] is entry:
            data = hit[1]
        else:
            data = entry.model_dump_json().encode("utf-8")
        fresh[id(entry)] = (entry, data)
        encoded.append(data)
    if cache is not None:
        cache.clear()
        cache.update(fresh)
    head: dict[str, object] = {"version": STORE_VERSION, "scope": state.scope}
    # `next_seq` (version 1's id counter) is dropped: new ids do not come from a counter.
    head.update({k: v for k, v in state.extra.items() if k not in ("items", "next_seq", *head)})
    parts = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n" for k, v in head.items()]
    if encoded:
        items = b'  "items": [\n    ' + b"\n  , ".join(encoded) + b"\n  ]"
    else:
        items = b'  "items": []'
    return ("{\n" + "".join(parts)).encode("utf-8") + items + b"\n}\n"


def read_bytes(path: Path, *, root: Path | None = None) -> bytes | None:
    """A store's (or journal's) bytes, None when missing. No link below `root` is
    followed (runtime/private_files.py): a store linked to another project's is refused
    with UnsafeStoreError, so its entries never reach this project's model."""
    try:
        return private_files.read_bytes(path, root=root)
    except private_files.UnsafePathError as exc:
        raise unsafe_store(exc) from None


def atomic_write(path: Path, data: bytes, *, root: Path | None = None) -> None:
    """Temp file (0600) in the same dir, fsync, os.replace, fsync the dir."""
    try:
        private_files.atomic_write(path, data, root=root)
    except private_files.UnsafePathError as exc:
        raise unsafe_store(exc) from None


def write_backup(target: Path, data: bytes, *, root: Path | None = None) -> None:
    """Create `target` (never overwrite) holding exactly `data`, durably; verify it."""
    try:
        private_files.create_new(target, data, root=root, durable=True)
    except private_files.UnsafePathError as exc:
        raise unsafe_store(exc) from None
    if private_files.read_bytes(target, root=root) != data:
        raise OSError(f"backup {target} does not read back identical")


class Store:
    """Lock, read and write one scope's store file."""

    def __init__(self, files: StoreFiles, *, lock_timeout: float = 30.0) -> None:
        self.files = files
        self.lock_timeout = lock_timeout
        self._cache: StoreState | None = None
        self._lines: LineCache = {}

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the exclusive cross-process lock (released by the kernel if we die)."""
        try:
            # Every write of a store, journal or backup happens under this lock, so this is
            # where the directory gets its .gitignore (locks and backups stay out of git).
            ensure_data_dir(self.files.directory, root=self.files.root)
            fd = file_lock.acquire(self.files.lock, timeout=self.lock_timeout, root=self.files.root)
        except file_lock.FileLockTimeout as exc:
            raise LockTimeoutError(str(exc)) from None
        except private_files.UnsafePathError as exc:
            raise unsafe_store(exc) from None
        except OSError as exc:
            raise StoreUnavailableError(
                f"Cannot open the memory lock {self.files.lock}: {exc.strerror}. "
                f"Make {self.files.directory} writable."
            ) from exc
        try:
            yield
        finally:
            os.close(fd)

    def parse(self, data: bytes | None) -> StoreState:
        """Parse bytes (None: no file yet), reusing the last parse when the bytes match."""
        if data is None:
            return StoreState(self.files.scope)
        digest = sha256_hex(data)
        if self._cache is not None and self._cache.hash == digest:
            return self._cache.copy()
        try:
            state = parse_store(data, self.files.scope)
        except CorruptStoreError as exc:
            # Checked only once parsing failed, so a valid store costs nothing extra.
            line = conflict_marker_line(data)
            if line is not None:
                raise store_conflict(self.files.store, self.files.scope, line) from exc
            dupe = duplicate_id_in(data)
            if dupe is not None:
                raise duplicate_id(self.files.store, self.files.scope, dupe) from exc
            raise
        self._cache = state.copy()
        return state

    def encode(self, state: StoreState) -> bytes:
        """`state` in the store's one layout, reusing the lines of unchanged entries."""
        return dump_state(state, self._lines)

    def wrote(self, state: StoreState, data: bytes) -> str:
        """`data` (from `encode`) is now the store: `state` takes its hash and order, as
        a fresh read would give them, and becomes the parse cache. Returns the hash."""
        state.hash = sha256_hex(data)
        state.entries = in_store_order(state.entries)
        self._cache = state.copy()
        return state.hash

    def write_locked(self, state: StoreState) -> str:
        """Write `state` durably (caller holds the lock); returns the new hash."""
        data = self.encode(state)
        self._remove_stale_temps()
        try:
            atomic_write(self.files.store, data, root=self.files.root)
        except OSError as exc:
            raise StoreUnavailableError(
                f"Cannot write {self.files.store}: {exc.strerror or exc}. "
                "Check permissions and free space; the store is unchanged."
            ) from exc
        return self.wrote(state, data)

    def _remove_stale_temps(self) -> None:
        # Under the lock, any temp file of ours belongs to a writer that died mid-write.
        for tmp in self.files.directory.glob(f".{self.files.store.name}.*.tmp"):
            with contextlib.suppress(OSError):
                private_files.remove(tmp, root=self.files.root)
