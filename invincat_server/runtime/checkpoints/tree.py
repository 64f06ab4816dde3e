"""The project's files a shell command could change, snapshotted cheaply.

Which files: in a git work tree, what `git ls-files -co --exclude-standard` lists
(tracked, plus untracked ones .gitignore does not exclude); elsewhere, a walk skipping
the folders the search tools skip. `git ls-files` only reads: it never writes the index,
and `core.fsmonitor` is switched off so a repository's config cannot make it run a
program. Nothing else of git is used: no `add`, no stash, no refs.

A file whose (size, mtime_ns, ctime_ns, inode) did not change since the last snapshot
keeps its known hash (the stat cache, `stat-cache.json` in the project's checkpoint
folder) and is not read again; one whose blob is already stored is not written again.
Symbolic links and special files are left out (docs/rewind.md).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from invincat_server.runtime import private_files
from invincat_server.runtime.checkpoints.manifests import FileState, safe_relative
from invincat_server.runtime.checkpoints.store import ObjectStore, digest_of
from invincat_server.runtime.git_command import git_output

log = logging.getLogger("invincat.checkpoints")

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", ".invincat"})
"""The folders a walk skips: those the search tools skip (runtime/tools/search.py)."""
GIT_TIMEOUT = 120.0
SNAPSHOT_MAX_FILE_BYTES = 50 * 1024 * 1024
"""A bigger file is left out of a command's snapshot (a data set, a build artefact that
is not ignored): copying it before every command would cost more than the rewind is
worth. It is named in docs/rewind.md as not restored after a shell command."""
_CACHE_NAME = "stat-cache.json"

Snapshot = dict[str, FileState]


def git_files(root: Path) -> list[str] | None:
    """The tracked and unignored files of the work tree at `root`, or None when `root`
    is not the top of a git work tree (or git is missing or fails)."""
    if not (root / ".git").exists():
        return None
    out = git_output(root, ["ls-files", "-z", "-co", "--exclude-standard"], timeout=GIT_TIMEOUT)
    if out is None:
        return None
    names = out.decode("utf-8", "surrogateescape").split("\0")
    return sorted({name for name in names if safe_relative(name)})


def walked_files(root: Path) -> list[str]:
    found: list[str] = []
    for top, dirs, files in os.walk(root):  # follows no link to a folder
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        base = os.path.relpath(top, root)
        for name in files:
            rel = name if base == "." else f"{base}/{name}"
            if safe_relative(rel.replace(os.sep, "/")):
                found.append(rel.replace(os.sep, "/"))
    return sorted(found)


def project_files(root: Path) -> list[str]:
    listed = git_files(root)
    return listed if listed is not None else walked_files(root)


def read_project_file(root: Path, rel: str) -> tuple[bytes, os.stat_result] | None:
    """The bytes and stat of a regular file of the project, None when it is absent, a
    link or not a regular file (never followed: a link could point out of the project)."""
    try:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        return fh.read(), info


def current_state(store: ObjectStore, rel: str, *, keep: bool = True) -> FileState:
    """What `rel` holds now (its blob stored when `keep`), or ABSENT."""
    found = read_project_file(store.root, rel)
    if found is None:
        return FileState(None)
    data, info = found
    digest = store.put(data) if keep else digest_of(data)
    return FileState(digest, stat.S_IMODE(info.st_mode))


@dataclass
class StatCache:
    entries: dict[str, list[int | str]]

    @staticmethod
    def key(info: os.stat_result) -> list[int | str]:
        return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


def _load_cache(store: ObjectStore) -> StatCache:
    try:
        data = private_files.read_bytes(store.base / _CACHE_NAME, root=store.home)
        raw = json.loads(data) if data else {}
    except (OSError, ValueError):
        raw = {}  # a damaged cache only costs hashing again
    entries = raw if isinstance(raw, dict) else {}
    return StatCache({k: v for k, v in entries.items() if isinstance(v, list) and len(v) == 6})


def cached_blobs(store: ObjectStore) -> set[str]:
    """The blobs the stat cache names: the latest snapshot's copy of each file, which the
    next snapshot takes as stored without reading the file (pruning.py spares them)."""
    return {v[4] for v in _load_cache(store).entries.values() if isinstance(v[4], str)}


def forget_cached(store: ObjectStore, digests: set[str]) -> None:
    """Drop the stat-cache entries naming `digests` (their blobs are being deleted): the
    next snapshot reads and stores those files again."""
    cache = _load_cache(store)
    kept = {rel: v for rel, v in cache.entries.items() if v[4] not in digests}
    if len(kept) != len(cache.entries):
        _save_cache(store, StatCache(kept))


def _save_cache(store: ObjectStore, cache: StatCache) -> None:
    with contextlib.suppress(OSError):
        data = json.dumps(cache.entries, separators=(",", ":")).encode()
        private_files.atomic_write(store.base / _CACHE_NAME, data, root=store.home, durable=False)


def snapshot(store: ObjectStore, names: list[str] | None = None) -> Snapshot:
    """Every listed file's state, each blob stored; unchanged files (stat cache) are
    neither read nor hashed again, unless their blob went (pruned)."""
    root = store.root
    prefix = str(root) + os.sep  # strings, not Paths: thousands of files per snapshot
    cache = _load_cache(store)
    result: Snapshot = {}
    fresh: dict[str, list[int | str]] = {}
    for rel in project_files(root) if names is None else names:
        try:
            info = os.lstat(prefix + rel)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_size > SNAPSHOT_MAX_FILE_BYTES:
            continue
        key = StatCache.key(info)
        known = cache.entries.get(rel)
        mode = stat.S_IMODE(info.st_mode)
        if known is not None and known[:4] == key and isinstance(known[4], str):
            digest = known[4]
            if store.has(digest):
                result[rel] = FileState(digest, mode)
                fresh[rel] = [*key, digest, mode]
                continue
        try:
            state = current_state(store, rel)
        except OSError as exc:  # this file cannot be kept (a link in the store): only it
            log.warning("checkpoint: %s not kept: %s", rel, exc)
            continue
        if state.digest is None:
            continue
        result[rel] = state
        fresh[rel] = [*key, state.digest, state.mode]
    if names is None:
        cache.entries = fresh
    else:
        cache.entries.update(fresh)
    _save_cache(store, cache)
    return result
