"""Workspace confinement: every path a tool touches must stay inside one directory.

The model proposes paths; it must not be able to read or write outside the project it
was opened on, whether through ``..``, an absolute path, or a symlink that leads out.
The check is done on the *resolved* path (symlinks followed), so what is checked is the
file that would actually be opened.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["ProtectedPathError", "Workspace", "WorkspaceError"]


class WorkspaceError(Exception):
    """A path is unusable for a workspace tool.

    The message is shown to the model/user as-is, so it says what is wrong and what is
    allowed.
    """


class ProtectedPathError(WorkspaceError):
    """The deny hook protects the path (memory stores, Invincat's settings): the call is
    refused by policy, not mistaken, so file tools report it `rejected` (tool_outcome.py)."""


class Workspace:
    """The directory the agent's file and shell tools are confined to."""

    root: Path

    def __init__(self, root: str | Path) -> None:
        # realpath, not Path.resolve(strict=True): the root must be canonical so that the
        # prefix comparison in resolve() is meaningful even if the root itself is reached
        # through a symlink (e.g. /tmp -> /private/tmp on macOS).
        self.root = Path(os.path.realpath(os.fspath(root)))
        # Set by the session: a reason string for paths no tool may touch (memory stores,
        # journals, locks, backups, $INVINCAT_HOME), None for everything else. Called with
        # `write=True` for writes: some files may be read but never changed.
        self.deny: Callable[[Path, bool], str | None] | None = None

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """Return the real absolute path for ``path``, or raise if it leaves the workspace.

        Relative paths are taken relative to the root. Absolute paths are accepted only
        if they end up inside the root. Symlinks are followed; for a path that does not
        exist yet, the nearest existing ancestor is resolved and the rest is appended,
        so creating ``linkdir/new.txt`` where ``linkdir`` points outside is refused.
        ``~`` is not expanded: it is an ordinary file name here. ``write`` says the
        caller will change the file (the deny hook is stricter for writes). A relative
        path that spells the root without its leading ``/`` is read as absolute
        (`root_spelled_relative`), then checked like any other.
        """
        if not isinstance(path, str):
            raise WorkspaceError(f"Path must be a string, got {type(path).__name__}.")
        if "\x00" in path:
            raise WorkspaceError(f"Path {path!r} contains a NUL byte, which no file name can.")
        candidate = Path(path)
        if not candidate.is_absolute():
            spelled = self.root_spelled_relative(candidate, reading=not write)
            if spelled is None and write:
                self._refuse_root_folder_write(path, candidate)
            candidate = spelled or self.root / candidate
        resolved = self._real(candidate)
        if not self.contains(resolved):
            raise WorkspaceError(
                f"Path '{path}' resolves to {resolved}, outside the workspace {self.root}. "
                "File tools only work inside the workspace."
            )
        if self.deny is not None:
            reason = self.deny(resolved, write)
            if reason:
                raise ProtectedPathError(reason)
        return resolved

    def root_spelled_relative(self, relative: Path, *, reading: bool = True) -> Path | None:
        """``relative`` as an absolute path when it starts with the root's own path minus
        the leading ``/`` (``tmp/x/project/calc.py`` for root ``/tmp/x/project``): small
        models copy the root from the system prompt and drop the slash. None when it does
        not, or when its first part (``tmp``) exists in the project: then the path is
        the project's own, as given. The root's last folders alone (``project/calc.py``)
        count too, when the file after them exists, but only for ``reading``: such a
        write is refused with the file's real path (`resolve`), so what the user approves
        is what changes."""
        own = self.root.parts[1:]
        parts = relative.parts
        if not own or not parts or os.path.lexists(self.root / parts[0]):
            return None
        if parts[: len(own)] == own:
            return Path(self.root.anchor, *parts)
        if not reading:
            return None
        # Only the root's last folders (``project/calc.py`` for ``/tmp/x/project``): taken
        # only when what follows them exists, so creating ``project/new.py`` still makes
        # a folder ``project`` rather than a file at the root.
        for start in range(1, len(own)):
            tail = own[start:]
            if parts[: len(tail)] == tail and len(parts) > len(tail):
                rest = self.root.joinpath(*parts[len(tail) :])
                if os.path.lexists(rest):
                    return rest
        return None

    def _refuse_root_folder_write(self, path: str, relative: Path) -> None:
        """Refuse a write spelled with the root's last folders (``project/calc.py`` for
        root ``/tmp/x/project``, no folder ``project`` in it) when the file after them
        exists at the root: it would create a second ``calc.py`` in a new folder while
        the model meant the first (Qwen2.5-Coder-1.5B wrote its right fix there, bench
        run 19). Refused rather than redirected, so what is written is what was asked;
        the error names the file, and the model sends the call again."""
        meant = self.root_spelled_relative(relative, reading=True)
        if meant is None:
            return
        folder = relative.parts[0]
        raise WorkspaceError(
            f"Path '{path}' starts with '{folder}', the project folder's own name: paths "
            f"are relative to the project root, where this file is '{self.relative(meant)}'. "
            "Nothing was written: send the call again with that path (to make a new folder "
            f"'{folder}' inside the project, create the folder first)."
        )

    def denied(self, path: Path) -> bool:
        """True if the deny hook protects ``path`` from reading (search tools skip it)."""
        return self.deny is not None and bool(self.deny(path, False))

    def contains(self, path: Path) -> bool:
        """True if the already-resolved ``path`` is the root or below it."""
        return path == self.root or path.is_relative_to(self.root)

    def relative(self, path: Path) -> str:
        """Display form of ``path``: relative to the root, ``'.'`` for the root itself."""
        path = Path(path)
        if not path.is_absolute():
            path = self.root / path
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            # Callers normally pass resolved paths; an unresolved one (e.g. through a
            # symlinked parent) gets one more chance before falling back to absolute.
            real = self._real(path)
            try:
                rel = real.relative_to(self.root)
            except ValueError:
                return str(path)
        text = rel.as_posix()
        return text if text else "."

    @staticmethod
    def _real(path: Path) -> Path:
        # os.path.realpath (non-strict) follows every symlink that exists, including a
        # dangling final link, and treats the missing tail lexically. That is exactly
        # "resolve the nearest existing ancestor, then append the rest", and it also
        # collapses '..' after the symlinks before it have been followed.
        try:
            return Path(os.path.realpath(path))
        except (OSError, ValueError) as exc:
            raise WorkspaceError(f"Cannot resolve path '{path}': {exc}.") from exc
