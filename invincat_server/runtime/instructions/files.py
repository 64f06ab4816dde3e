"""Reading the team's instruction files: which ones, in what order, how much of each, and
what is refused.

- `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` at every level from the project root down to the
  working folder, root first (as Codex reads AGENTS.md: the nearer file comes later and
  refines the ones above it); `.github/copilot-instructions.md`, `.cursorrules` and each
  `.cursor/rules/*.mdc` (name order, as its frontmatter says: cursor_rules.py) at the
  root. Kinds in the configured order (settings.py).
- A CLAUDE.md's `@path` imports (imports.py), relative to the importing file, at most
  `MAX_IMPORT_DEPTH` hops deep; a cycle, a deeper import and an import leaving the
  project are listed as refused, never read. Every path is listed relative to the root,
  one outside it as `<outside project>`: no absolute path or home folder reaches the
  prompt. A missing import is ignored (as Claude Code
  does: `@pytest.fixture` in prose is no file), but watched.
- Confined: a path whose real location (symlinks followed) is outside the project, or in
  `.git/`, `.invincat/` or `$INVINCAT_HOME`, is refused; the real file is then opened
  with no link followed below the root (private_files.open_file), so a link swapped in
  between the check and the open is refused too, as is a FIFO or a folder.
- Bounded: `max_bytes` in total. A file is read only up to what is left of it (a 1 MB file
  costs 32 KiB of memory), cut at its last line break before the cap and marked
  truncated; the files after it are listed as not read.
- One bad file costs that file only: a NUL byte (binary) or text that is not UTF-8 is
  listed as skipped with the reason.

Nothing here writes, and nothing is redacted yet: the text is redacted where it leaves
for the model (render.py). Plain data, no pydantic: the memory views list it quickly.
"""

from __future__ import annotations

import codecs
import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from invincat_server.runtime import private_files
from invincat_server.runtime.instructions import cursor_rules
from invincat_server.runtime.instructions.imports import MAX_IMPORTS_PER_FILE, find_imports
from invincat_server.runtime.instructions.settings import (
    CLAUDE_MD,
    CURSOR_RULES,
    NESTED,
    InstructionSettings,
)

MAX_IMPORT_DEPTH = 5
MAX_FILES = 64
"""Files listed at most (a deep working folder with every kind, plus imports)."""
_PRIVATE_DIRS = frozenset({".git", ".invincat"})

CAP_REACHED = "not read: the instruction files' cap is reached"
OUTSIDE_PATH = "<outside project>"
"""How a refused import outside the project is named in the listings and the prompt:
never as written (an absolute path or `~/…` would tell the model where the user's files
are and who the user is)."""
OUTSIDE = "refused: it leads outside the project (a link or a path out of it)"

StatKey = tuple[tuple[int, ...] | None, tuple[int, ...] | None]


@dataclass(frozen=True)
class InstructionFile:
    """One instruction file as read (or refused)."""

    source: str
    """Its kind: `AGENTS.md`, `CLAUDE.md`, `.github/copilot-instructions.md`, `GEMINI.md`,
    `.cursorrules` (an import's is its importing file's); a Cursor rule's is its own path
    (`.cursor/rules/NAME.mdc`)."""
    path: str
    """Relative to the project root; `<outside project>` for an import refused as leading
    outside it (never the path as written)."""
    size: int | None = None
    """Bytes on disk; None when it was not opened."""
    text: str = ""
    """The part included, as in the file (not yet redacted)."""
    truncated: bool = False
    skipped: str | None = None
    """Why none of it is included (None: included)."""
    imported_by: str | None = None
    applies_to: str | None = None
    """The globs an auto-attached Cursor rule applies to (None: it always applies)."""
    same_as: str | None = None
    """The listed path of the file this one is (a link to it, a hard link): its text is
    shown once, under that file (not in the listings' JSON: `skipped` says it)."""

    @property
    def included(self) -> int:
        return len(self.text.encode("utf-8"))

    def to_json(self) -> dict[str, Any]:
        """As the memory views list it (docs/protocol.md): never the text itself;
        `applies_to` only when there is one."""
        listed: dict[str, Any] = {
            "source": self.source,
            "path": self.path,
            "size": self.size,
            "included": self.included,
            "truncated": self.truncated,
            "skipped": self.skipped,
            "imported_by": self.imported_by,
        }
        if self.applies_to is not None:
            listed["applies_to"] = self.applies_to
        return listed


@dataclass(frozen=True)
class InstructionSet:
    files: tuple[InstructionFile, ...]
    watched: tuple[tuple[Path, StatKey], ...]
    """Every path looked at, present or not, with its stat taken before it was read: when
    none changed, neither did the set."""
    max_bytes: int

    def unchanged(self) -> bool:
        return all(stat_key(path) == key for path, key in self.watched)


def stat_key(path: Path) -> StatKey:
    """The path's own stat and its target's (a re-pointed link changes the first), each
    None when missing."""
    keys: list[tuple[int, ...] | None] = []
    for follow in (False, True):
        try:
            st = os.stat(path, follow_symlinks=follow)
        except (OSError, ValueError):
            keys.append(None)
        else:
            keys.append((st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns, st.st_mode))
    return keys[0], keys[1]


def candidate_paths(
    root: Path, working_dir: Path, kinds: tuple[str, ...]
) -> list[tuple[str, Path]]:
    """(kind, path) of every top-level file to look for, in reading order. `root` and
    `working_dir` are real paths; a working folder outside the root counts as the root."""
    levels = [root]
    if working_dir != root and working_dir.is_relative_to(root):
        for part in working_dir.relative_to(root).parts:
            levels.append(levels[-1] / part)
    return [
        (kind, level / kind) for kind in kinds for level in (levels if kind in NESTED else [root])
    ]


def read_instructions(
    root: Path,
    working_dir: Path | None = None,
    settings: InstructionSettings | None = None,
    *,
    home: Path | None = None,
) -> InstructionSet:
    """The instruction files of the project at `root` for `working_dir` (default: the
    root), under `settings` (default: every kind, 32 KiB); `home`: $INVINCAT_HOME,
    never read from."""
    settings = settings or InstructionSettings()
    reading = _Reading(Path(os.path.realpath(root)), settings.max_bytes, home)
    work = Path(os.path.realpath(working_dir)) if working_dir is not None else reading.root
    for kind, path in candidate_paths(reading.root, work, settings.files):
        reading.top_level(kind, path)
    return InstructionSet(tuple(reading.files), tuple(reading.watched), settings.max_bytes)


@dataclass
class _Reading:
    root: Path
    remaining: int
    home: Path | None
    files: list[InstructionFile] = field(default_factory=list)
    watched: list[tuple[Path, StatKey]] = field(default_factory=list)
    seen: dict[Path, str] = field(default_factory=dict)
    """Real path → the listed path of each file included, so a file reached twice (a
    CLAUDE.md that is a link to AGENTS.md) is included once."""

    def top_level(self, kind: str, path: Path) -> None:
        if kind == CURSOR_RULES:
            self.cursor_rules(path)
        else:
            self.read(kind, path, self.rel(path), imported_by=None, chain=())

    def cursor_rules(self, folder: Path) -> None:
        """Each `.mdc` file of the root's `.cursor/rules`, in name order. The folder is
        listed with no link followed: one linked elsewhere is refused, its names unseen."""
        self.watched.append((folder, stat_key(folder)))  # a rule added or removed
        try:
            names = private_files.list_names(folder, root=self.root)
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            self.skip(CURSOR_RULES, CURSOR_RULES, f"cannot be read ({_why(exc)})")
            return
        for name in cursor_rules.rule_names(names):
            shown = f"{CURSOR_RULES}/{name}"
            if not name.isprintable():  # a terminal escape in a name reaches no screen
                shown = f"{CURSOR_RULES}/{name.encode('unicode_escape').decode('ascii')}"
                self.skip(shown, shown, "skipped: its name holds a control character")
                continue
            self.read(shown, folder / name, shown, imported_by=None, chain=(), rule=True)

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def skip(self, kind: str, path: str, reason: str, **more: Any) -> None:
        self.files.append(InstructionFile(kind, path, skipped=reason, **more))

    def read(
        self,
        kind: str,
        path: Path,
        shown: str,
        *,
        imported_by: str | None,
        chain: tuple[Path, ...],
        rule: bool = False,
    ) -> None:
        """`rule`: a Cursor rule, whose frontmatter decides what is included."""
        # Stat before reading: a change during the read shows as a new key next time.
        self.watched.append((path, stat_key(path)))
        extra: dict[str, Any] = {"imported_by": imported_by}
        try:
            os.lstat(path)
            real = Path(os.path.realpath(path))
        except (FileNotFoundError, NotADirectoryError):
            return  # not there: nothing to list
        except (OSError, ValueError) as exc:
            self.skip(kind, shown, f"cannot be read ({_why(exc)})", **extra)
            return
        if len(self.files) >= MAX_FILES:
            self.skip(kind, shown, f"not read: more than {MAX_FILES} instruction files", **extra)
        elif (refusal := self.refusal(real, chain)) is not None:
            if real in self.seen and real not in chain and refusal.startswith("the same"):
                extra["same_as"] = self.seen[real]
            if refusal == CAP_REACHED:  # inside the project: its size says what is missed
                extra["size"] = _size(real)
            self.skip(kind, shown, refusal, **extra)
        else:
            self.open_and_read(kind, real, shown, extra, chain, rule=rule)

    def refusal(self, real: Path, chain: tuple[Path, ...]) -> str | None:
        """Why the file at real path `real` is not read, or None."""
        if not real.is_relative_to(self.root):
            return OUTSIDE
        parts = set(real.relative_to(self.root).parts)
        home = Path(os.path.realpath(self.home)) if self.home is not None else None
        if parts & _PRIVATE_DIRS or (home is not None and real.is_relative_to(home)):
            return "refused: it is in .git/, .invincat/ or Invincat's home, not instructions"
        if real in chain:
            names = [*(self.seen.get(p, "?") for p in chain), self.seen.get(real, "?")]
            return f"refused: an import cycle ({' → '.join(names)}); read once"
        if real in self.seen:
            return f"the same file as {self.seen[real]}, included once"
        if self.remaining <= 0:
            return CAP_REACHED
        return None

    def open_and_read(
        self,
        kind: str,
        real: Path,
        shown: str,
        extra: dict[str, Any],
        chain: tuple[Path, ...],
        *,
        rule: bool = False,
    ) -> None:
        try:
            # No link followed below the root: `real` was checked, and what is opened is
            # that file, not whatever a link swapped in since points to.
            fd = private_files.open_file(real, os.O_RDONLY, root=self.root, single_link=False)
        except (FileNotFoundError, NotADirectoryError):
            return
        except (OSError, ValueError) as exc:  # ValueError: the root itself (`@.`)
            self.skip(kind, shown, f"cannot be read ({_why(exc)})", **extra)
            return
        with os.fdopen(fd, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            # Never more than the cap allows, plus one; a Cursor rule's frontmatter is
            # read beyond it (only the text shown counts).
            limit = self.remaining + (cursor_rules.MAX_FRONTMATTER_BYTES if rule else 0)
            data = fh.read(limit + 1)
        extra["size"] = size
        cut = len(data) > limit
        data = data[:limit]
        if b"\0" in data:
            self.skip(kind, shown, "skipped: it holds a NUL byte (a binary file?)", **extra)
            return
        try:
            text = _decode(data, partial=cut)
        except UnicodeDecodeError as exc:
            self.skip(kind, shown, f"skipped: it is not UTF-8 text (byte {exc.start})", **extra)
            return
        if rule:
            found = cursor_rules.parse_rule(text)
            decided = cursor_rules.verdict(found, shown)
            if not decided.include:  # costs none of the cap: nothing of it is shown
                self.skip(kind, shown, decided.reason or "not included", **extra)
                return
            text, extra["applies_to"] = found.body, decided.applies_to
        shown_bytes = text.encode("utf-8")
        truncated = cut or len(shown_bytes) > self.remaining
        if truncated:
            text = _cut_at_line(_decode(shown_bytes[: self.remaining], partial=True))
            self.remaining = 0  # the files after a cut one would read out of order
        else:
            self.remaining -= len(shown_bytes)
        self.seen[real] = shown
        self.files.append(InstructionFile(kind, shown, text=text, truncated=truncated, **extra))
        if kind == CLAUDE_MD:
            self.follow_imports(kind, real, shown, text, (*chain, real))

    def import_path(self, importer: Path, target: str) -> Path | None:
        """Where an import of the file at real path `importer` points, as written (links
        not followed), when that is inside the project; None for anything outside."""
        if target.startswith("~"):
            return None
        path = Path(os.path.normpath(importer.parent / target))
        return path if path.is_relative_to(self.root) else None

    def follow_imports(
        self, kind: str, real: Path, shown: str, text: str, chain: tuple[Path, ...]
    ) -> None:
        targets = find_imports(text)
        for target in targets[:MAX_IMPORTS_PER_FILE]:
            extra: dict[str, Any] = {"imported_by": shown}
            path = self.import_path(real, target)
            named = self.rel(path) if path is not None else OUTSIDE_PATH
            if len(chain) > MAX_IMPORT_DEPTH:
                self.skip(
                    kind, named, f"refused: imports nest deeper than {MAX_IMPORT_DEPTH}", **extra
                )
            elif target.startswith("~"):
                self.skip(
                    kind, named, "refused: it is in the home folder, outside the project", **extra
                )
            elif path is None:  # refused as written: nothing outside is even looked at
                self.skip(kind, named, OUTSIDE, **extra)
            else:
                self.read(kind, path, named, imported_by=shown, chain=chain)
        if len(targets) > MAX_IMPORTS_PER_FILE:
            extra_path = self.import_path(real, targets[MAX_IMPORTS_PER_FILE])
            self.skip(
                kind,
                self.rel(extra_path) if extra_path is not None else OUTSIDE_PATH,
                f"not read: {shown} has more than {MAX_IMPORTS_PER_FILE} imports; "
                f"the {len(targets) - MAX_IMPORTS_PER_FILE} after the first are ignored",
                imported_by=shown,
            )


def _size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def _decode(data: bytes, *, partial: bool) -> str:
    """UTF-8 text (a BOM dropped); `partial`: the data was cut, so an incomplete character
    at its end is dropped rather than an error."""
    if partial:
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    else:
        text = data.decode("utf-8")
    return text.removeprefix("\ufeff")


def _cut_at_line(text: str) -> str:
    """A cut text up to its last line break (else its last whitespace), so no line — and
    no token, a secret's included — is shown in part; a single word longer than the cap
    is left out."""
    end = text.rfind("\n")
    if end < 0:
        end = max(text.rfind(" "), text.rfind("\t"))
    return text[: end + 1] if end >= 0 else ""


def _why(exc: BaseException) -> str:
    if isinstance(exc, private_files.UnsafePathError):
        # Without the link's target (`is a symbolic link (to /home/me/…)`): it names a
        # place outside the project, which neither the prompt nor the listing shows.
        return exc.problem.split(" (to ", 1)[0]
    if isinstance(exc, OSError) and exc.errno == errno.EACCES:
        return "permission denied"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return "not a file"  # ValueError: the project root itself


def instruction_list(
    root: Path, working_dir: Path | None = None, *, home: Path
) -> list[dict[str, Any]]:
    """The files as every front end lists them next to memory (`InstructionFile.to_json`,
    docs/protocol.md), under the user's `[instructions]` (ConfigError when unusable)."""
    from invincat_server.runtime.instructions.settings import load_instruction_settings

    found = read_instructions(root, working_dir, load_instruction_settings(home), home=home)
    return [item.to_json() for item in found.files]
