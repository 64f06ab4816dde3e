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

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from invincat_server.runtime import private_files
from invincat_server.runtime.memory.errors import MemoryStoreError
from invincat_server.runtime.memory.merge_driver import STORE_PATH
from invincat_server.runtime.program_path import find_program

DRIVER = "invincat-memory"
ATTRIBUTE_LINE = f"{STORE_PATH} merge={DRIVER}"
DRIVER_NAME = "Invincat governed project memory"
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
    """Append the line unless it is there; no link followed (a repository's
    `.gitattributes` symlink cannot make us write elsewhere)."""
    try:
        data = private_files.read_bytes(path, root=top) or b""
        text = data.decode("utf-8")
    except private_files.UnsafePathError as exc:
        raise ShareError(f"{path} is not a plain file ({exc}); fix it, then retry.") from exc
    except UnicodeDecodeError as exc:
        raise ShareError(f"{path} is not UTF-8 text; fix it, then retry.") from exc
    if has_attribute_line(text):
        return False
    addition = ("" if not text or text.endswith("\n") else "\n") + ATTRIBUTE_LINE + "\n"
    try:
        fd = private_files.open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, root=top)
    except OSError as exc:
        raise ShareError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        private_files.write_all(fd, addition.encode("utf-8"))
    finally:
        os.close(fd)
    return True
