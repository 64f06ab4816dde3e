"""`invincat memory share`: register the governed merge driver for the project store.

Two halves, on purpose in two places (gitattributes(5), "Defining a custom merge driver"):
- `.gitattributes` (committed, shared) only *names* the driver for the store's path;
- the driver's *command* lives in this clone's own `.git/config`, written here as the
  absolute path of this installation. A repository can name a driver but never define
  one, so a cloned repository cannot make git run a program of its choosing.

Without the local definition git ignores the attribute and merges the store as text,
which leaves conflict markers that Invincat refuses (conflicts.py): today's behaviour.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from invincat_server.runtime import private_files
from invincat_server.runtime.memory.errors import MemoryStoreError
from invincat_server.runtime.memory.merge_driver import STORE_PATH
from invincat_server.runtime.program_path import find_program

DRIVER = "invincat-memory"
ATTRIBUTE_LINE = f"{STORE_PATH} merge={DRIVER}"
DRIVER_NAME = "Invincat governed project memory"
GITATTRIBUTES_MODE = 0o666
"""A new `.gitattributes` is created with this less the umask, as git creates files."""
GIT_TIMEOUT = 120.0  # git config is instant; only a stuck filesystem gets near this


class ShareError(MemoryStoreError):
    """Sharing cannot be set up here (no git repository, no git, a file in the way)."""


@dataclass(frozen=True)
class ShareResult:
    repository: Path
    gitattributes: Path
    line_added: bool
    config: dict[str, str]

    def to_json(self) -> dict[str, object]:
        return {
            "repository": str(self.repository),
            "gitattributes": {
                "path": str(self.gitattributes),
                "line": ATTRIBUTE_LINE,
                "added": self.line_added,
            },
            "config": dict(self.config),
        }


def driver_command(program: list[str] | None = None) -> str:
    """The driver line for git: this installation's absolute `invincat`, shell-quoted."""
    words = program if program is not None else this_invincat()
    return " ".join(shlex.quote(w) for w in words) + " memory merge-driver %O %A %B %P"


def this_invincat() -> list[str]:
    """The absolute command of this installation: its console script beside the running
    interpreter, else that interpreter isolated (`-I`: no project module can shadow ours)."""
    script = Path(sys.executable).with_name("invincat")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-I", "-m", "invincat_server.cli"]


def share(cwd: Path, *, program: list[str] | None = None) -> ShareResult:
    """Append the attribute line (once) and define the driver in the local git config."""
    git = find_program("git")
    if git is None:
        raise ShareError("git is not on PATH (its absolute entries); install git first.")
    top = _toplevel(git, cwd)
    attributes = top / ".gitattributes"
    added = _append_attribute(attributes, top)
    config = {
        f"merge.{DRIVER}.name": DRIVER_NAME,
        f"merge.{DRIVER}.driver": driver_command(program),
    }
    for key, value in config.items():
        _git(git, top, "config", "--local", key, value)
    return ShareResult(top, attributes, added, config)


def _toplevel(git: str, cwd: Path) -> Path:
    done = _git(git, cwd, "rev-parse", "--show-toplevel", check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise ShareError(
            f"{cwd} is not inside a git work tree: `invincat memory share` registers the "
            "merge driver in a clone's own .git/config and its .gitattributes; run it in "
            "your clone of the repository."
        )
    return Path(done.stdout.strip())


def _git(git: str, cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            [git, "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ShareError(f"git {args[0]} failed: {exc}") from exc
    if check and done.returncode != 0:
        raise ShareError(f"git {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return done


def has_attribute_line(text: str) -> bool:
    """Whether `.gitattributes` already names the driver for the store (any spacing)."""
    for line in text.splitlines():
        words = line.split()
        if words and words[0].lstrip("/") == STORE_PATH and f"merge={DRIVER}" in words[1:]:
            return True
    return False


def _append_attribute(path: Path, top: Path) -> bool:
    """Append the line unless it is there. `.gitattributes` is the repository's own,
    committed file, not Invincat state: it keeps its mode (a new one gets 0666 less the
    umask, as git gives the files it checks out), so private_files (0600) is not used.
    It is still opened without following a link, in one open for the read and the
    append: a planted `.gitattributes` symlink cannot make us write elsewhere."""
    with _open_gitattributes(path, top) as fd:
        try:
            text = _read_all(fd).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ShareError(f"{path} is not UTF-8 text; fix it, then retry.") from exc
        if has_attribute_line(text):
            return False
        addition = ("" if not text or text.endswith("\n") else "\n") + ATTRIBUTE_LINE + "\n"
        try:
            private_files.write_all(fd, addition.encode("utf-8"))
        except OSError as exc:
            raise ShareError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return True


@contextlib.contextmanager
def _open_gitattributes(path: Path, top: Path) -> Iterator[int]:
    """`path` (directly in the work tree's top, which is followed: it is the user's
    checkout) opened to read and append, created if missing; a link, a special file or
    a file with other hard links (an append would land in it too) is refused."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        top_fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fd = os.open(path.name, flags, GITATTRIBUTES_MODE, dir_fd=top_fd)
        finally:
            os.close(top_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ShareError(
                f"{path} is not a plain file (it is a symbolic link, to "
                f"{_link_target(path)}); share does not write through a link: replace it "
                "with a plain file, then retry. Nothing was changed."
            ) from exc
        raise ShareError(f"cannot open {path}: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            what = "a special file" if not stat.S_ISREG(info.st_mode) else "hard-linked"
            raise ShareError(
                f"{path} is not a plain file ({what}); replace it with a plain file, then "
                "retry. Nothing was changed."
            )
        yield fd
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _link_target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"
