"""The content-addressed object store of one project's checkpoints.

Blobs live at `$INVINCAT_HOME/checkpoints/<key>/objects/ab/cdef…` (sha256 of the
content), so a file unchanged between turns costs nothing more. Every file here is a
private file (0600 in 0700 folders, no link followed below `$INVINCAT_HOME`): blobs hold
the project's contents, secrets included, and must be as private as threads.sqlite.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from invincat_server.runtime import private_files

CHECKPOINTS_DIR = "checkpoints"
_DIGEST = re.compile(r"\A[0-9a-f]{64}\Z")
_SAFE_NAME = re.compile(r"\A[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}\Z")


class CheckpointError(Exception):
    """A checkpoint cannot be used: unknown, corrupt, or unsafe. The message says which
    and what to do; nothing was changed in the workspace."""


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def project_key(root: Path) -> str:
    """The folder name of a project's checkpoints: its root path, hashed (a path may hold
    any character, and the name says nothing about the project to a reader of the home)."""
    return hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:20]


def thread_dir_name(thread_id: str) -> str:
    """A thread id as a folder name: itself when it is a plain name, else hashed."""
    if _SAFE_NAME.match(thread_id) and thread_id not in (".", ".."):
        return thread_id
    return "h-" + hashlib.sha256(thread_id.encode("utf-8", "surrogateescape")).hexdigest()[:32]


class ObjectStore:
    """The blobs and manifests of the project rooted at `root`."""

    def __init__(self, home: Path, root: Path) -> None:
        self.home = Path(home)
        self.root = Path(root)
        self.base = self.home / CHECKPOINTS_DIR / project_key(self.root)
        self._known: set[str] | None = None

    @classmethod
    def in_folder(cls, home: Path, base: Path) -> ObjectStore:
        """The store of an existing project folder whose root is not known (deleting a
        thread's checkpoints in every project)."""
        store = cls(home, Path("/"))
        store.base = Path(base)
        return store

    def blob_path(self, digest: str) -> Path:
        if not _DIGEST.match(digest):
            raise CheckpointError(f"{digest!r} is not a blob name (64 hex digits).")
        return self.base / "objects" / digest[:2] / digest[2:]

    def thread_dir(self, thread_id: str) -> Path:
        return self.base / "threads" / thread_dir_name(thread_id)

    def _scan(self) -> set[str]:
        """The names of the stored blobs: regular files only (a link planted there is
        not a blob), listed once per store object: a snapshot asks for thousands."""
        objects = self.base / "objects"
        found: set[str] = set()
        try:
            private_files.ensure_dir(objects, root=self.home)  # refuses a linked folder
            with os.scandir(objects) as folders:
                for folder in folders:
                    if len(folder.name) != 2 or not folder.is_dir(follow_symlinks=False):
                        continue
                    with os.scandir(folder.path) as blobs:
                        found.update(
                            folder.name + blob.name
                            for blob in blobs
                            if blob.is_file(follow_symlinks=False)
                        )
        except OSError:
            pass  # an unsafe or unreadable folder holds no usable blob
        return found

    def has(self, digest: str) -> bool:
        if self._known is None:
            self._known = self._scan()
        return digest in self._known

    def put(self, data: bytes, digest: str | None = None) -> str:
        """Store `data` (once: a blob already there is not written again)."""
        digest = digest or digest_of(data)
        if not self.has(digest):
            # Not fsynced one by one (a tree snapshot writes thousands): a blob a crash
            # left short fails its hash check on read and is named then.
            private_files.atomic_write(self.blob_path(digest), data, root=self.home, durable=False)
            assert self._known is not None
            self._known.add(digest)
        return digest

    def get(self, digest: str) -> bytes:
        """The blob's bytes, checked against its name; CheckpointError if missing,
        unsafe (a link planted in the store) or corrupt."""
        path = self.blob_path(digest)
        try:
            data = private_files.read_bytes(path, root=self.home)
        except private_files.UnsafePathError as exc:
            raise CheckpointError(f"Checkpoint blob {digest[:12]} is unsafe: {exc}") from None
        except OSError as exc:
            raise CheckpointError(f"Cannot read checkpoint blob {digest[:12]}: {exc}") from None
        if data is None:
            raise CheckpointError(
                f"Checkpoint blob {digest[:12]} is missing (pruned by the size cap, or "
                "deleted); that file cannot be restored."
            )
        if digest_of(data) != digest:
            raise CheckpointError(f"Checkpoint blob {digest[:12]} is corrupt (its hash differs).")
        return data
