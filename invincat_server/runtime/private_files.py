"""The one way Invincat creates, opens and replaces its own state files.

Two promises (docs/security.md, "Project state and private files"):

- **Private.** Folders are created 0700 and files 0600 whatever the umask (an explicit
  mode, then `fchmod`, because the umask only ever removes bits and a caller's umask may
  be looser than ours); a file opened for writing, and the files `tighten` is given at
  start, lose any group/other bits they had. Other local users never read a conversation,
  a memory journal or a prompt history.
- **Not redirected.** A repository decides what lies in `<project>/.invincat/`, so every
  component below the *anchor* (the project root, or `$INVINCAT_HOME` for the user's own
  files) is opened with `O_NOFOLLOW`, walking from the anchor's directory fd with
  `dir_fd=`: a `.invincat` symlink to elsewhere, or a store linked to another project's,
  is refused for reading as much as for writing, before anything is changed, with an
  `UnsafePathError` naming the path and what to do. The anchor itself is followed: it is
  the user's choice (a project reached through a link, a home kept in a dotfiles repo).

The anchor is the `root` argument; without one it is the folder holding the last
`.invincat` component of the path (so project state is protected even when a caller
forgets to say so), else the file's own folder. Callers that work on `$INVINCAT_HOME`,
which may itself be named `.invincat`, pass `root=home`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
DATA_DIR_NAME = ".invincat"

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW


class UnsafePathError(OSError):
    """A component of a state path is a symlink, not the expected kind, or hard-linked.

    Nothing was read or changed. `path` is the offending component."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(
            errno.ELOOP,
            f"{path} {problem}. Invincat does not follow links or special files in its "
            "state (a repository could point it at another project or folder): remove or "
            f"replace it (e.g. `rm {path}`), then retry; nothing was read or written there.",
        )
        self.path = path
        self.problem = problem

    def __str__(self) -> str:
        return str(self.strerror)


def anchor_of(path: Path, root: Path | None = None) -> tuple[Path, tuple[str, ...]]:
    """(anchor directory, the components below it, never following links) for `path`."""
    path = Path(os.path.abspath(path))
    if root is not None:
        base = Path(os.path.abspath(root))
        return base, path.relative_to(base).parts  # ValueError: a caller's bug, not input
    parts = path.parts
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] == DATA_DIR_NAME:
            return Path(*parts[:index]), parts[index:]
    return path.parent, (path.name,)


def _problem(dir_fd: int, name: str, *, want_dir: bool) -> str | None:
    """Why `name` in `dir_fd` cannot be the state folder (`want_dir`) or file it should
    be; None when it is missing or fine."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(name, dir_fd=dir_fd)
        except OSError:
            target = "?"
        return f"is a symbolic link (to {target})"
    if want_dir:
        return None if stat.S_ISDIR(info.st_mode) else "is not a directory"
    return None if stat.S_ISREG(info.st_mode) else "is not a regular file"


def _open_component(dir_fd: int, name: str, flags: int, full: Path) -> int:
    try:
        return os.open(name, flags, FILE_MODE, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.ENXIO):
            want_dir = bool(flags & os.O_DIRECTORY)
            problem = _problem(dir_fd, name, want_dir=want_dir) or "changed while it was opened"
            raise UnsafePathError(full, problem) from None
        raise


def _walk(base: Path, names: tuple[str, ...], *, create: bool) -> int:
    """An fd of the directory `base/names...`, every name opened without following links;
    missing ones are created 0700 when `create`, else FileNotFoundError. The anchor is
    followed, and created (0700) when `create`: it is the user's, not the repository's."""
    if create:
        base.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    current = base
    try:
        for name in names:
            current = current / name
            try:
                child = _open_component(fd, name, _DIR_FLAGS, current)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, DIR_MODE, dir_fd=fd)
                child = _open_component(fd, name, _DIR_FLAGS, current)
                os.fchmod(child, DIR_MODE)  # the umask may have taken bits we asked for
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def parent_dir(path: Path, *, root: Path | None = None, create: bool) -> Iterator[int]:
    """The fd of `path`'s folder, reached without following links below the anchor."""
    base, names = anchor_of(path, root)
    if not names:
        raise ValueError(f"{path} is the anchor itself, not a file below it")
    fd = _walk(base, names[:-1], create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def _check_file(fd: int, path: Path, *, single_link: bool) -> os.stat_result:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafePathError(path, "is not a regular file")
    if single_link and info.st_nlink > 1:
        os.close(fd)
        raise UnsafePathError(path, f"has {info.st_nlink} hard links (another file shares it)")
    return info


def open_file(
    path: Path,
    flags: int,
    *,
    root: Path | None = None,
    single_link: bool | None = None,
) -> int:
    """`os.open(path, flags)` for a state file: no link followed below the anchor, parent
    folders created 0700 when `flags` has O_CREAT, the file created (or, opened for
    writing, tightened to) 0600; a non-regular file, or one with other hard links when
    `single_link` (default: when opened for writing), is refused. The caller closes the fd.

    Hard links matter for writes in place (a journal or transcript appended to): they
    would land in the other file too. A replaced file (atomic_write) breaks the link, and
    reading one is harmless: a repository cannot ship a hard link to a file outside it."""
    writing = bool(flags & (os.O_WRONLY | os.O_RDWR))
    if single_link is None:
        single_link = writing
    with parent_dir(path, root=root, create=bool(flags & os.O_CREAT)) as dir_fd:
        # O_NONBLOCK: a FIFO planted in place of the file must not hang the open; it is
        # refused below. On a regular file the flag changes nothing.
        fd = _open_component(dir_fd, path.name, flags | _NOFOLLOW | os.O_NONBLOCK, Path(path))
    info = _check_file(fd, Path(path), single_link=single_link)
    if writing and info.st_mode & 0o777 != FILE_MODE:
        try:
            os.fchmod(fd, FILE_MODE)
        except OSError:
            os.close(fd)
            raise
    return fd


def read_bytes(path: Path, *, root: Path | None = None) -> bytes | None:
    """The file's bytes, or None when it (or a folder on the way) does not exist."""
    try:
        fd = open_file(path, os.O_RDONLY, root=root)
    except (FileNotFoundError, NotADirectoryError):
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def exists(path: Path, *, root: Path | None = None) -> bool:
    """Whether the state file exists; UnsafePathError when the way to it is unsafe."""
    try:
        os.close(open_file(path, os.O_RDONLY, root=root))
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def list_names(path: Path, *, root: Path | None = None) -> list[str]:
    """The names in the folder `path`, reached without following links below the anchor
    (a folder linked elsewhere is refused, not listed); FileNotFoundError when missing."""
    base, names = anchor_of(path, root)
    fd = _walk(base, names, create=False)
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def ensure_dir(path: Path, *, root: Path | None = None) -> None:
    """Create the folder `path` (and those above it, below the anchor) 0700 if missing."""
    base, names = anchor_of(path, root)
    os.close(_walk(base, names, create=True))


def make_dirs(path: Path) -> None:
    """`mkdir -p` with every folder it creates 0700 (Path.mkdir gives the parents the
    umask's mode): the walk starts at the nearest folder that exists, which is followed."""
    path = Path(os.path.abspath(path))
    base = path
    while not base.exists() and base != base.parent:
        base = base.parent
    os.close(_walk(base, path.relative_to(base).parts, create=True))


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir_fd(dir_fd: int) -> None:
    try:
        os.fsync(dir_fd)
    except OSError as exc:  # some filesystems refuse fsync on a directory
        if exc.errno not in (errno.EINVAL, errno.EBADF):
            raise


def atomic_write(
    path: Path, data: bytes, *, root: Path | None = None, durable: bool = True
) -> None:
    """Replace `path` with `data`: a 0600 temp file next to it, fsync, rename over it,
    fsync the folder. A crash leaves the old or the new file; a symlink or special file at
    `path` is refused (and left as it is) rather than replaced or written through."""
    path = Path(path)
    with parent_dir(path, root=root, create=True) as dir_fd:
        problem = _problem(dir_fd, path.name, want_dir=False)
        if problem is not None:
            raise UnsafePathError(path, problem)
        tmp = f".{path.name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, FILE_MODE, dir_fd=dir_fd
        )
        try:
            try:
                os.fchmod(fd, FILE_MODE)
                write_all(fd, data)
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        if durable:
            fsync_dir_fd(dir_fd)


def create_new(path: Path, data: bytes, *, root: Path | None = None, durable: bool = False) -> None:
    """Create `path` holding `data`; FileExistsError if anything (a link too) is there.
    A failed write removes the half-written file."""
    path = Path(path)
    with parent_dir(path, root=root, create=True) as dir_fd:
        fd = _open_component(
            dir_fd, path.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, path
        )
        try:
            os.fchmod(fd, FILE_MODE)
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(path.name, dir_fd=dir_fd)
            raise
        os.close(fd)
        if durable:
            fsync_dir_fd(dir_fd)


def remove(path: Path, *, root: Path | None = None) -> None:
    """Unlink the state file (a link there is removed, never what it points to)."""
    with contextlib.suppress(FileNotFoundError), parent_dir(path, root=root, create=False) as fd:
        os.unlink(Path(path).name, dir_fd=fd)


def tighten(*paths: Path) -> None:
    """Take group/other bits off existing files and folders (left alone: missing ones,
    symlinks, and those of another owner, which chmod would refuse anyway)."""
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
            continue
        wanted = DIR_MODE if stat.S_ISDIR(info.st_mode) else FILE_MODE
        if info.st_mode & 0o077 or (stat.S_ISREG(info.st_mode) and info.st_mode & 0o777 != wanted):
            with contextlib.suppress(OSError):
                os.chmod(path, info.st_mode & 0o700 if stat.S_ISDIR(info.st_mode) else wanted)


def prepare_home(home: Path) -> None:
    """`$INVINCAT_HOME` created 0700 (with its parents, which are the user's), tightened
    if it exists, and so are the files directly in it (threads.sqlite and SQLite's side
    files, approvals, memory, settings) and everything under its private folders (logs,
    run, history, tampered, checkpoints): a home made by an older version under umask
    022 was readable by every local user. `skills/` is left alone (a skill may ship
    executable scripts)."""
    home = Path(home)
    with contextlib.suppress(FileExistsError):
        home.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(home, DIR_MODE)
    targets = [home]
    with contextlib.suppress(OSError):
        targets.extend(p for p in home.iterdir() if p.is_file() and not p.is_symlink())
    for folder in PRIVATE_HOME_DIRS:
        for top, dirs, files in os.walk(home / folder):  # os.walk follows no link
            targets.append(Path(top))
            targets.extend(Path(top) / name for name in files)
            del dirs[100:]  # bounded: a home is not a tree of thousands of folders
    tighten(*targets)


def prepare_sqlite(db: Path, *, root: Path) -> None:
    """Create the database file 0600 before SQLite does (SQLite gives its -wal and -shm
    files the database file's mode), and tighten an existing one and its side files."""
    with contextlib.suppress(FileExistsError):
        create_new(db, b"", root=root)
    tighten(db, *(db.with_name(db.name + suffix) for suffix in SQLITE_SIDE_FILES))


SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
PRIVATE_HOME_DIRS = ("logs", "run", "history", "tampered", "checkpoints")
