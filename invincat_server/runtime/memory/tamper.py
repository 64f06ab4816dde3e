"""Tamper watch: undo store changes a tool call made behind governance's back.

The runtime takes `fingerprint()` before each tool execution and calls
`restore_if_tampered(before)` after it. A change is governed when the journal only grew
by records that chain the before-hash to the current hash (a memory-agent batch that
landed during the tool call). Anything else - a rewritten, deleted or created store, a
journal that no longer starts with its old bytes - is quarantined as a backup and the
previous bytes are put back, under the store lock, and journaled through the memory
write seam (`MemoryService.writer`, runtime/memory/writer.py) like any other batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from invincat_server.runtime import private_files
from invincat_server.runtime.memory import journal
from invincat_server.runtime.memory import store as store_mod
from invincat_server.runtime.memory.changeset import BatchContext, Outcome, new_batch_id
from invincat_server.runtime.memory.errors import StoreUnavailableError
from invincat_server.runtime.memory.models import SCOPES, Scope, now_iso
from invincat_server.runtime.memory.report import AppliedOp
from invincat_server.runtime.memory.store import read_bytes, sha256_hex

if TYPE_CHECKING:
    from invincat_server.runtime.memory.service import MemoryService

# Records that prove nothing about governance: they describe changes found, not made.
_UNGOVERNED_ACTORS = {"external", "recovery"}


@dataclass(frozen=True)
class FileSnap:
    path: Path
    data: bytes | None

    @property
    def sha(self) -> str | None:
        return sha256_hex(self.data) if self.data is not None else None


@dataclass(frozen=True)
class Fingerprint:
    """Bytes of both stores and journals at one moment (taken under each store's lock)."""

    stores: dict[Scope, FileSnap]
    journals: dict[Scope, FileSnap]


@dataclass
class ScopeTamper:
    scope: Scope
    store_changed: bool
    journal_changed: bool
    restored: bool
    quarantined: list[Path] = field(default_factory=list)
    error: str | None = None


@dataclass
class TamperReport:
    """What was found and undone; `message` is written for the model and the user."""

    scopes: list[ScopeTamper]

    @property
    def message(self) -> str:
        parts = []
        for item in self.scopes:
            what = " and ".join(
                name
                for name, hit in (("store", item.store_changed), ("journal", item.journal_changed))
                if hit
            )
            if item.restored:
                saved = ", ".join(str(p) for p in item.quarantined) or "nothing to keep"
                parts.append(
                    f"the {item.scope} memory {what} was changed outside governance; the change "
                    f"was undone (modified copy saved: {saved})"
                )
            else:
                parts.append(
                    f"the {item.scope} memory {what} was changed outside governance and could "
                    f"not be restored: {item.error}"
                )
        return (
            "Memory protection: "
            + "; ".join(parts)
            + ". Memory files may only change through governed batches."
        )


class TamperWatch:
    def __init__(self, service: MemoryService) -> None:
        self._service = service

    def _dir_in_use(self, scope: Scope) -> bool:
        files = self._service.files[scope]
        try:
            return private_files.exists(files.store, root=files.root) or private_files.exists(
                files.journal, root=files.root
            )
        except private_files.UnsafePathError:
            # A linked `.invincat` or store is not this project's memory: nothing of it is
            # read or written (the memory commands say why), so there is nothing to watch.
            return False

    def fingerprint(self) -> Fingerprint:
        stores: dict[Scope, FileSnap] = {}
        journals: dict[Scope, FileSnap] = {}
        for scope in SCOPES:
            files = self._service.files[scope]
            if not self._dir_in_use(scope):
                # Never create .invincat/ just to watch it: nothing there yet.
                stores[scope] = FileSnap(files.store, None)
                journals[scope] = FileSnap(files.journal, None)
                continue
            with self._service.writer.locked(scope):
                stores[scope] = FileSnap(files.store, read_bytes(files.store, root=files.root))
                journals[scope] = FileSnap(
                    files.journal, read_bytes(files.journal, root=files.root)
                )
        return Fingerprint(stores, journals)

    def restore_if_tampered(self, before: Fingerprint) -> TamperReport | None:
        found = []
        for scope in SCOPES:
            was_empty = before.stores[scope].data is None and before.journals[scope].data is None
            if was_empty and not self._dir_in_use(scope):
                continue
            with self._service.writer.locked(scope):
                item = self._check_scope(scope, before)
            if item is not None:
                found.append(item)
        return TamperReport(found) if found else None

    def _check_scope(self, scope: Scope, before: Fingerprint) -> ScopeTamper | None:
        files = self._service.files[scope]
        old_store, old_journal = before.stores[scope].data, before.journals[scope].data
        store_now = read_bytes(files.store, root=files.root)
        journal_now = read_bytes(files.journal, root=files.root)
        prefix = old_journal or b""
        journal_ok = (journal_now or b"").startswith(prefix) and not (
            old_journal is not None and journal_now is None
        )
        store_changed = store_now != old_store
        if journal_ok and not store_changed:
            return None
        if journal_ok and self._governed(old_store, (journal_now or b"")[len(prefix) :], store_now):
            return None
        item = ScopeTamper(scope, store_changed, not journal_ok, restored=False)
        try:
            if store_changed:
                self._quarantine_and_put_back(
                    files.store, store_now, old_store, "tampered", ".json", item
                )
            if not journal_ok:
                self._quarantine_and_put_back(
                    files.journal, journal_now, old_journal, "journal.tampered", ".jsonl", item
                )
        except OSError as exc:
            item.error = f"{exc.strerror or exc}; fix permissions on {files.directory}"
            return item
        item.restored = True
        self._journal_revert(scope, store_now, old_store, item)
        return item

    @staticmethod
    def _governed(old_store: bytes | None, appended: bytes, store_now: bytes | None) -> bool:
        """True when the appended journal records chain the old store hash to the new one."""
        current = sha256_hex(old_store) if old_store is not None else None
        for record in journal.parse_lines(appended):
            if record.actor in _UNGOVERNED_ACTORS or record.hash_before != current:
                return False
            current = record.hash_after
        return current == (sha256_hex(store_now) if store_now is not None else None)

    def _quarantine_and_put_back(
        self,
        path: Path,
        now: bytes | None,
        old: bytes | None,
        kind: str,
        suffix: str,
        item: ScopeTamper,
    ) -> None:
        files = self._service.files[item.scope]
        if now is not None:
            backup = files.backup(kind, suffix)
            store_mod.write_backup(backup, now, root=files.root)  # keep them before replacing
            item.quarantined.append(backup)
        if old is None:
            private_files.remove(path, root=files.root)
        else:
            store_mod.atomic_write(path, old, root=files.root)

    def _journal_revert(
        self, scope: Scope, store_now: bytes | None, old_store: bytes | None, item: ScopeTamper
    ) -> None:
        writer = self._service.writer
        writer.forget(scope)
        ctx = BatchContext(new_batch_id(), scope, "tamper_revert", now_iso())
        state = store_mod.StoreState(scope)
        if old_store is not None:
            try:
                state = writer.parse(scope, old_store)
            except (store_mod.CorruptStoreError, StoreUnavailableError):
                state = store_mod.StoreState(scope, hash=sha256_hex(old_store))
        outcome = Outcome(
            state=state,
            applied=[AppliedOp.of(op="quarantine", path=str(p)) for p in item.quarantined],
            reason="a tool call changed memory files outside governance; previous bytes restored",
        )
        writer.commit(
            ctx,
            outcome,
            [],
            hash_before=sha256_hex(store_now) if store_now is not None else None,
            write=False,
        )
