"""Applying a rewind's plan to the workspace, itself recorded as a checkpoint.

Before anything is changed, a `rewind` manifest keeps every file the plan touches as it
is now (so the rewind can be undone like a turn). Then each file is put back: its bytes
and mode written to a temp file next to it and renamed over it, or it is deleted. The
way to it is walked from the project root without following links (a link planted where
a folder was is refused, never written through), and missing folders are created.
A file that fails costs that file only: the others are restored and the failure named.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass, field

from invincat_server.runtime.checkpoints import manifests as mf
from invincat_server.runtime.checkpoints.manifests import Change, Manifest
from invincat_server.runtime.checkpoints.planning import FilePlan, RewindPlan
from invincat_server.runtime.checkpoints.store import CheckpointError, ObjectStore
from invincat_server.runtime.checkpoints.tree import current_state
from invincat_server.runtime.private_files import write_all

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class RestoreResult:
    checkpoint: int | None
    """The number of the `rewind` checkpoint recorded (undo it with `--undo`)."""
    restored: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Changed by hand since Invincat's last write, and not confirmed by name."""
    failed: dict[str, str] = field(default_factory=dict)


def _folder_fd(root_fd: int, parts: list[str], *, create: bool) -> int:
    fd = os.dup(root_fd)
    try:
        for name in parts:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)  # the umask decides, as for any folder
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise CheckpointError(
                        f"{name} on the way is a link or not a folder; a rewind writes "
                        "nothing through it (remove it to restore this file)."
                    ) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _put_back(store: ObjectStore, root_fd: int, entry: FilePlan) -> None:
    parts = entry.path.split("/")
    if entry.target.digest is None:
        try:
            folder = _folder_fd(root_fd, parts[:-1], create=False)
        except FileNotFoundError:
            return
        try:
            info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise CheckpointError(f"{entry.path} is now a folder; it is left as it is.")
            os.unlink(parts[-1], dir_fd=folder)
        except FileNotFoundError:
            pass
        finally:
            os.close(folder)
        return
    data = store.get(entry.target.digest)
    folder = _folder_fd(root_fd, parts[:-1], create=True)
    tmp = f".{parts[-1][:100]}.{secrets.token_hex(6)}.invincat-rewind"
    try:
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder
        )
        try:
            write_all(fd, data)
            os.fchmod(fd, entry.target.mode & 0o777)  # no set-id bit from a manifest
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise
    finally:
        os.close(folder)


def restore(store: ObjectStore, plan: RewindPlan, confirmed: set[str]) -> RestoreResult:
    """Put back every file of `plan` but those changed by hand and not in `confirmed`."""
    chosen = [
        f
        for f in plan.files
        if f.problem is None and (not f.changed_by_hand or f.path in confirmed)
    ]
    result = RestoreResult(None)
    result.skipped = [f.path for f in plan.files if f.changed_by_hand and f.path not in confirmed]
    result.failed = {f.path: f.problem for f in plan.files if f.problem is not None}
    if not chosen:
        return result
    manifest = Manifest(mf.next_seq(store, plan.thread_id), "rewind", None, None, mf.now())
    for entry in chosen:
        manifest.files[entry.path] = Change(current_state(store, entry.path), entry.target)
    mf.save(store, plan.thread_id, manifest)  # the undo data, before anything changes
    result.checkpoint = manifest.seq
    root_fd = os.open(store.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for entry in chosen:
            try:
                _put_back(store, root_fd, entry)
            except (CheckpointError, OSError) as exc:
                result.failed[entry.path] = str(exc)
                continue
            result.restored.append(entry.path)
    finally:
        os.close(root_fd)
    return result
