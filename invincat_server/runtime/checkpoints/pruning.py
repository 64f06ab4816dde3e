"""Keeping checkpoint storage bounded: the per-project size cap, and a thread's
checkpoints deleted with the thread.

Blobs are shared between turns and threads of a project, so a blob goes only when no
manifest of the project names it any more. Over the cap (`[checkpoints] max_mb`,
docs/configuration.md), blobs no manifest names go first, then the oldest manifests of
the project, whichever thread; the newest manifest of the thread that just ran is never
pruned.

The cap never deletes a blob the stat cache names (tree.py): the next snapshot takes it
as stored without looking, and a command running now (another thread, another process)
holds its snapshot there until its manifest names the files it changed. Those blobs are
outside the cap's count: at most one copy of each tracked-and-unignored file (of 50 MiB
at most). Deleting a thread does delete them when no manifest names them, and drops
their stat-cache entries, so the next snapshot copies those files again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from invincat_server.runtime import private_files
from invincat_server.runtime.checkpoints import manifests as mf
from invincat_server.runtime.checkpoints.store import CHECKPOINTS_DIR, ObjectStore, thread_dir_name
from invincat_server.runtime.checkpoints.tree import cached_blobs, forget_cached


@dataclass(frozen=True)
class StoredManifest:
    thread_dir: Path
    seq: int
    created_at: str
    blobs: frozenset[str]
    size: int


def _manifests(store: ObjectStore) -> list[StoredManifest]:
    found: list[StoredManifest] = []
    threads = store.base / "threads"
    with contextlib.suppress(OSError):
        for entry in os.scandir(threads):
            if not entry.is_dir(follow_symlinks=False):
                continue
            for name in os.listdir(entry.path):
                path = Path(entry.path) / name
                if not name.endswith(".json"):
                    continue
                try:
                    data = private_files.read_bytes(path, root=store.home) or b""
                    manifest = mf.parse(data, str(path))
                except (OSError, mf.CheckpointError):
                    continue  # an unreadable manifest protects nothing; left for the user
                # Only what a rewind puts back is kept: an `after` is a hash to compare.
                blobs = {
                    change.before.digest
                    for change in manifest.files.values()
                    if change.before.digest is not None
                }
                found.append(
                    StoredManifest(
                        Path(entry.path),
                        manifest.seq,
                        manifest.created_at,
                        frozenset(blobs),
                        len(data),
                    )
                )
    return sorted(found, key=lambda m: (m.created_at, m.seq))


def _blobs(store: ObjectStore) -> dict[str, int]:
    sizes: dict[str, int] = {}
    objects = store.base / "objects"
    with contextlib.suppress(OSError):
        for folder in os.scandir(objects):
            if not folder.is_dir(follow_symlinks=False) or len(folder.name) != 2:
                continue
            for blob in os.scandir(folder.path):
                if blob.is_file(follow_symlinks=False) and not blob.name.startswith("."):
                    sizes[folder.name + blob.name] = blob.stat(follow_symlinks=False).st_size
    return sizes


def _drop_blob(store: ObjectStore, digest: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(store.blob_path(digest))


def storage_bytes(store: ObjectStore) -> int:
    return sum(_blobs(store).values()) + sum(m.size for m in _manifests(store))


def collect_garbage(store: ObjectStore, *, keep_cached: bool = True) -> int:
    """Delete the blobs no manifest names — but those the stat cache names, unless not
    `keep_cached` (then their stat-cache entries go too); returns the bytes freed."""
    named = set().union(*(m.blobs for m in _manifests(store)))
    spared = cached_blobs(store) if keep_cached else set()
    freed = 0
    dropped: set[str] = set()
    for digest, size in _blobs(store).items():
        if digest not in named and digest not in spared:
            _drop_blob(store, digest)
            dropped.add(digest)
            freed += size
    if dropped and not keep_cached:
        forget_cached(store, dropped)
    return freed


def enforce_cap(
    store: ObjectStore, cap_bytes: int, keep_thread: str | None
) -> list[tuple[str, int]]:
    """Prune until the project's checkpoints fit `cap_bytes`; the (thread folder, seq)
    of each manifest pruned, oldest first."""
    spared = cached_blobs(store)  # outside the count, never pruned (module doc)
    blobs = {d: size for d, size in _blobs(store).items() if d not in spared}
    manifests = _manifests(store)
    total = sum(blobs.values()) + sum(m.size for m in manifests)
    if total <= cap_bytes:
        return []
    total -= collect_garbage(store)
    blobs = {d: size for d, size in _blobs(store).items() if d not in spared}
    keep_dir = store.thread_dir(keep_thread) if keep_thread is not None else None
    newest_kept = max((m.seq for m in manifests if m.thread_dir == keep_dir), default=None)
    users: dict[str, int] = {}
    for m in manifests:
        for digest in m.blobs:
            users[digest] = users.get(digest, 0) + 1
    pruned: list[tuple[str, int]] = []
    for m in manifests:
        if total <= cap_bytes:
            break
        if m.thread_dir == keep_dir and m.seq == newest_kept:
            continue
        with contextlib.suppress(OSError):
            os.unlink(m.thread_dir / f"{m.seq:08d}.json")
        total -= m.size
        pruned.append((m.thread_dir.name, m.seq))
        for digest in m.blobs:
            users[digest] -= 1
            if users[digest] == 0 and digest in blobs:
                _drop_blob(store, digest)
                total -= blobs[digest]
    return pruned


def delete_thread_checkpoints(home: Path, thread_id: str) -> None:
    """Delete a thread's manifests in every project, then the blobs only they named."""
    base = Path(home) / CHECKPOINTS_DIR
    name = thread_dir_name(thread_id)
    with contextlib.suppress(OSError):
        for project in os.scandir(base):
            if not project.is_dir(follow_symlinks=False):
                continue
            folder = Path(project.path) / "threads" / name
            if folder.is_symlink():
                folder.unlink()
                continue
            if not folder.is_dir():
                continue
            shutil.rmtree(folder, ignore_errors=True)  # fd-based: follows no link inside
            store = ObjectStore.in_folder(Path(home), Path(project.path))
            collect_garbage(store, keep_cached=False)  # nothing of it left behind
