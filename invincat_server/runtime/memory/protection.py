"""Keeping agents' tools away from the memory files (spec section 9) and from Invincat's
own files under `$INVINCAT_HOME` (issue 13 §1, `policy/protected_files.py`).

File tools ask `protection(path, write=...)`; the shell tool asks
`command_touches_memory(cmd)`. Both are deliberately broad (a false refusal costs the
agent one retry; a miss lets it rewrite its own memory or grant itself permissions), and
neither is the last line: the tamper watches restore any store or settings file a tool
managed to change anyway.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import shlex
import stat
from pathlib import Path
from typing import Literal

from invincat_server.runtime.policy.protected_files import (
    HOME_READABLE,
    HOME_SETTINGS_FILES,
    PROJECT_SETTINGS_FILES,
)

# Store, journal, lock, backups, temp files: everything the memory code keeps on disk.
MEMORY_FILE = re.compile(r"^\.?memory_", re.IGNORECASE)
CANONICAL_NAMES = (
    "memory_user.json",
    "memory_project.json",
    "memory_user.journal.jsonl",
    "memory_project.journal.jsonl",
    "memory_user.lock",
    "memory_project.lock",
    "memory_project.corrupt-0.json",
    "memory_user.corrupt-0.json",
)
_GLOB_CHARS = re.compile(r"[*?\[]")
_NAMES_STORE = re.compile(r"memory_(?:user|project)")
_INVINCAT_MENTION = re.compile(r"\.invincat(?P<rest>[^\s;&|<>()`]*)")
_OPERATORS = {"|", "||", "&", "&&", ";", ";;", "(", ")", "<", ">", ">>", "<<", ">&", "<&", "|&"}
_FIND_ACTIONS = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls", "-fprintf"}
_REFUSAL = (
    "memory files, Invincat's own files ($INVINCAT_HOME: approval rules, trust, MCP config, "
    "settings, skills) and project permission settings (.mcp.json, .invincat/ settings) are "
    "off limits to shell commands; memory changes go through governance, settings changes "
    "through an approved write_file/edit_file"
)
# Names only Invincat uses: refused wherever they appear in a command.
_INVINCAT_ONLY_NAMES = re.compile(r"approvals\.json|trusted_projects\.json|invincat_home")
_PROJECT_SETTINGS_NAMES = frozenset(
    name.split("/", 1)[1] for name in PROJECT_SETTINGS_FILES if "/" in name
)
_HOME_NAMES = frozenset(HOME_SETTINGS_FILES)
Protection = Literal["memory", "home"]
_CLI_WRITES = {"apply", "archive", "restore", "delete", "revert"}


def _fold(path: str | Path) -> str:
    return os.path.normcase(str(path)).casefold()


def protected_paths(home: Path, project_root: Path) -> list[Path]:
    """The memory files of both scopes: canonical names plus any backup that exists."""
    return PathGuard(home, project_root).protected_paths()


class PathGuard:
    """Answers "does this path / command reach governed memory?" for one home + project."""

    def __init__(self, home: Path, project_root: Path) -> None:
        self.home = Path(os.path.abspath(home))
        self.project_root = Path(os.path.abspath(project_root))
        self.project_dir = self.project_root / ".invincat"
        self._memory_dirs = [self.project_dir, self.home]
        self._folded_dirs = {
            _fold(variant) for d in self._memory_dirs for variant in (d, os.path.realpath(d))
        }
        self._folded_project_dir = {
            _fold(self.project_dir),
            _fold(os.path.realpath(self.project_dir)),
        }
        self._folded_home = {_fold(self.home), _fold(os.path.realpath(self.home))}
        self._project_settings = {
            _fold(os.path.realpath(self.project_root / name)) for name in PROJECT_SETTINGS_FILES
        }
        # How commands spell $INVINCAT_HOME when it lies inside the project ($HOME as root):
        # `.invincat`, `.config/invincat`; any mention is refused.
        self._home_mentions = [_fold(p) for p in {str(self.home), os.path.realpath(self.home)}]
        for root in {self.project_root, Path(os.path.realpath(self.project_root))}:
            for home in {self.home, Path(os.path.realpath(self.home))}:
                if home != root and home.is_relative_to(root):
                    self._home_mentions.append(_fold(home.relative_to(root).as_posix()))

    def protected_paths(self) -> list[Path]:
        found: list[Path] = []
        for directory, scope in ((self.home, "user"), (self.project_dir, "project")):
            found += [
                directory / f"memory_{scope}.json",
                directory / f"memory_{scope}.journal.jsonl",
                directory / f"memory_{scope}.lock",
            ]
            found += [p for p in self._existing(directory) if p not in found]
        return found

    def _existing(self, directory: Path) -> list[Path]:
        try:
            return [directory / e.name for e in os.scandir(directory) if MEMORY_FILE.match(e.name)]
        except OSError:
            return []

    def _inodes(self) -> set[tuple[int, int]]:
        inodes = set()
        for directory in self._memory_dirs:
            for path in self._existing(directory):
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    inodes.add((st.st_dev, st.st_ino))
        return inodes

    def is_protected(
        self, path: str | Path, *, base: Path | None = None, write: bool = True
    ) -> bool:
        """True if a tool may not touch `path` (relative to `base`, default the project
        root); with `write=False`, whether it may not even read it."""
        return self.protection(path, base=base, write=write) is not None

    def protection(
        self, path: str | Path, *, base: Path | None = None, write: bool = True
    ) -> Protection | None:
        """Why tools may not use `path`: `"memory"` for a memory file, `"home"` for anything
        else under `$INVINCAT_HOME` (for reads: except `HOME_READABLE`), else None.

        Compares the resolved real path and the literal absolute spelling, both
        case-insensitively, and catches hard links by device + inode.
        """
        raw = Path(path)
        if not raw.is_absolute():
            raw = (base or self.project_root) / raw
        spellings = {os.path.abspath(raw), os.path.realpath(raw)}
        home_hit = False
        for spelling in spellings:
            folded = _fold(spelling)
            if folded in self._folded_project_dir:
                return "memory"
            parent, name = os.path.split(spelling)
            if _fold(parent) in self._folded_dirs and MEMORY_FILE.match(name):
                return "memory"
            home_hit = home_hit or self._home_part(folded, write)
        try:
            st = os.stat(raw)
        except (OSError, ValueError):
            return "home" if home_hit else None
        if stat.S_ISREG(st.st_mode):
            if (st.st_dev, st.st_ino) in self._inodes():
                return "memory"
            if (st.st_dev, st.st_ino) in self._home_inodes():
                return "home"
        return "home" if home_hit else None

    def _home_part(self, folded: str, write: bool) -> bool:
        """True if the folded absolute path is `$INVINCAT_HOME` or inside it (for reads:
        not inside one of the readable folders)."""
        for home in self._folded_home:
            if folded == home:
                return True
            if folded.startswith(home.rstrip("/") + "/"):
                first = folded[len(home.rstrip("/")) + 1 :].split("/", 1)[0]
                return write or first not in HOME_READABLE
        return False

    def _home_inodes(self) -> set[tuple[int, int]]:
        inodes = set()
        for name in HOME_SETTINGS_FILES:
            try:
                st = os.stat(self.home / name)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                inodes.add((st.st_dev, st.st_ino))
        return inodes

    def is_project_settings(self, path: str | Path, *, base: Path | None = None) -> bool:
        """True for the project files that grant permissions (`PROJECT_SETTINGS_FILES`)."""
        raw = Path(path)
        if not raw.is_absolute():
            raw = (base or self.project_root) / raw
        try:
            return _fold(os.path.realpath(raw)) in self._project_settings
        except (OSError, ValueError):
            return False

    def _is_memory_dir(self, path: Path) -> bool:
        real = _fold(os.path.realpath(path))
        return real in self._folded_dirs

    def _contains_memory(self, path: Path) -> bool:
        """True if the directory `path` is a memory dir or an ancestor of one."""
        try:
            real = Path(os.path.realpath(path))
        except (OSError, ValueError):
            return False
        if not real.is_dir():
            return False
        folded = _fold(real).rstrip("/") + "/"
        return any(
            (_fold(os.path.realpath(d)) + "/").startswith(folded)
            for d in self._memory_dirs
            if self._existing(d) or (d == self.home and d.is_dir())
        )

    # -- shell commands ----------------------------------------------------------
    def command_touches_memory(self, command: str, cwd: Path | None = None) -> str | None:
        """Why `command` would reach memory files, or None when it would not."""
        cwd = Path(cwd) if cwd is not None else self.project_root
        for check in (self._by_text, self._by_tokens):
            reason = check(command, cwd)
            if reason:
                return f"Refused: the command {reason}; {_REFUSAL}."
        return None

    def _by_text(self, command: str, cwd: Path) -> str | None:
        # Quotes and backslashes removed first so `"mem""ory_user"` or `mem\ory` still match.
        flat = re.sub(r"[\"'\\]", "", command).casefold()
        if _NAMES_STORE.search(flat):
            return "names a memory store file"
        found = _INVINCAT_ONLY_NAMES.search(flat)
        if found:
            return f"names {found.group(0)}, one of Invincat's own files"
        if ".mcp.json" in flat:
            return "names .mcp.json, the project's MCP server config"
        for mention in self._home_mentions:
            if re.search(rf"(?<![\w.-]){re.escape(mention)}(?![\w.-])", flat):
                return f"names {mention}, Invincat's home directory ($INVINCAT_HOME)"
        for match in _INVINCAT_MENTION.finditer(flat):
            reason = _invincat_mention_reason(match)
            if reason:
                return reason
        for word in re.split(r"[\s;&|<>()`=]+", flat):
            if _GLOB_CHARS.search(word) and _specific_memory_glob(word):
                return f"uses a pattern ({word}) that matches memory files"
        return None

    def _by_tokens(self, command: str, cwd: Path) -> str | None:
        try:
            lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            tokens = list(lexer)
        except ValueError:
            tokens = command.split()
        segments: list[list[str]] = [[]]
        for token in tokens:
            if token in _OPERATORS:
                segments.append([])
            else:
                segments[-1].append(token)
        for token in tokens:
            if token in _OPERATORS:
                continue
            reason = self._token_reason(token, cwd)
            if reason:
                return reason
        return self._recursive_reach(segments, cwd)

    def _token_reason(self, token: str, cwd: Path) -> str | None:
        candidates = [token]
        if "=" in token:
            candidates.append(token.rsplit("=", 1)[1])
        for candidate in candidates:
            if not candidate or candidate.startswith("-"):
                continue
            expanded = os.path.expanduser(os.path.expandvars(candidate))
            if _GLOB_CHARS.search(expanded):
                for hit in _glob(expanded, cwd):
                    if self.is_protected(hit, base=cwd):
                        return f"expands {candidate} to the memory file {Path(hit).name}"
                continue
            try:
                target = Path(expanded)
                target = target if target.is_absolute() else cwd / target
                kind = self.protection(target)
                if kind == "memory":
                    return f"refers to the memory file {candidate}"
                if kind == "home":
                    return f"refers to {candidate}, in Invincat's home directory"
                if self.is_project_settings(target):
                    return f"refers to {candidate}, a project file that grants permissions"
                if self._is_memory_dir(target):
                    return f"refers to {candidate}, the directory holding memory files"
            except (OSError, ValueError):
                continue
        return None

    def _recursive_reach(self, segments: list[list[str]], cwd: Path) -> str | None:
        """`find . -exec ...`, `find . | xargs ...`, `rm -r .`: trees that hold memory."""
        pipes_to_xargs = any(seg and os.path.basename(seg[0]) == "xargs" for seg in segments)
        for seg in segments:
            if not seg:
                continue
            program = os.path.basename(seg[0])
            if program == "invincat" and "memory" in seg and _CLI_WRITES & set(seg):
                # Governed, but it is the person's channel (actor cli/user): an agent
                # running it would write memory in the user's name.
                return "runs an `invincat memory` write command, which is for the user"
            if program == "invincat" and {"--trust-project", "--yes"} & set(seg):
                return "runs invincat with --trust-project/--yes, consent only the user gives"
            if program == "find":
                acts = any(arg in _FIND_ACTIONS for arg in seg) or pipes_to_xargs
                for root in _find_roots(seg) if acts else []:
                    if self._contains_memory(_under(cwd, root)):
                        return (
                            f"runs find with actions over {root}, which holds memory or "
                            "Invincat settings files"
                        )
            elif program == "rm" and any(
                re.match(r"^-\w*[rR]", a) or a == "--recursive" for a in seg[1:]
            ):
                for arg in seg[1:]:
                    if not arg.startswith("-") and self._contains_memory(_under(cwd, arg)):
                        return (
                            f"removes {arg} recursively, which holds memory or Invincat "
                            "settings files"
                        )
        return None


def _under(cwd: Path, arg: str) -> Path:
    path = Path(os.path.expanduser(os.path.expandvars(arg)))
    return path if path.is_absolute() else cwd / path


def _glob(pattern: str, cwd: Path) -> list[str]:
    try:
        if os.path.isabs(pattern):
            return glob.glob(pattern)[:1000]
        return [str(cwd / hit) for hit in glob.glob(pattern, root_dir=cwd)[:1000]]
    except (OSError, ValueError, re.error):
        return []


def _specific_memory_glob(word: str) -> bool:
    """A pattern aimed at memory files (`memory_*.json`), not a generic one (`*.json`)."""
    name = word.rsplit("/", 1)[-1]
    if not any(fnmatch.fnmatch(n, name) for n in CANONICAL_NAMES):
        return False
    chunks = [c for c in re.split(r"[*?]|\[[^\]]*\]", name) if len(c) >= 3]
    return any("memory" in c or c in "memory_" or c in ".memory_" for c in chunks)


def is_protected(path: str | Path, *, home: Path, project_root: Path) -> bool:
    """Module-level convenience for `PathGuard(home, project_root).is_protected(path)`."""
    return PathGuard(home, project_root).is_protected(path)


def command_touches_memory(
    command: str, *, home: Path, project_root: Path, cwd: Path | None = None
) -> str | None:
    """Module-level convenience for `PathGuard(...).command_touches_memory(command)`."""
    return PathGuard(home, project_root).command_touches_memory(command, cwd)


def _invincat_mention_reason(match: re.Match[str]) -> str | None:
    """Why a mention of `.invincat/<name>` in a command is refused, if it is."""
    rest = match.group("rest").lstrip("/")
    name = rest.split("/", 1)[0]
    if not name:
        return "names the .invincat directory that holds the project memory"
    if MEMORY_FILE.match(name):
        return "names a memory file in .invincat/"
    if name in _PROJECT_SETTINGS_NAMES or name in _HOME_NAMES:
        return f"names .invincat/{name}, a file that grants permissions"
    if _GLOB_CHARS.search(name) and any(fnmatch.fnmatch(n, name) for n in CANONICAL_NAMES):
        return f"uses a pattern ({match.group(0)}) that matches memory files"
    return None


def _find_roots(seg: list[str]) -> list[str]:
    """The start points of a `find` command (`.` when it names none)."""
    roots = []
    for arg in seg[1:]:
        if arg in ("-H", "-L", "-P"):
            continue
        if arg.startswith(("-", "(", "!")):
            break
        roots.append(arg)
    return roots or ["."]
