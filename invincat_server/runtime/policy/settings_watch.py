"""Tamper watch for Invincat's settings under `$INVINCAT_HOME` (issue 13 §1).

The path and command checks (`memory/protection.py`) refuse what they can recognise; a
shell command can still write `approvals.json` in ways no parser foresees (an obfuscated
`python -c`, a script it wrote first). Around every tool call the runtime snapshots the
files that grant permissions or start code (`policy/protected_files.py`) and, after the
call, puts back any that changed without Invincat itself writing them (`sanctioned.py`).
The modified bytes are kept under `$INVINCAT_HOME/tampered/` for the user.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from invincat_server.runtime import private_files
from invincat_server.runtime.policy import file_lock, sanctioned
from invincat_server.runtime.policy.protected_files import HOME_SETTINGS_FILES, HOME_WATCHED_DIRS

# Bounds on what one snapshot reads (it runs before every tool call); a skills tree beyond
# them is watched only up to the bound (documented limit).
MAX_FILES = 2000
MAX_FILE_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 16 * 1024 * 1024
LOCKED_FILES = frozenset({"approvals.json", "trusted_projects.json"})


@dataclass(frozen=True)
class SettingsSnapshot:
    files: dict[Path, bytes | None]


class SettingsWatch:
    def __init__(self, home: Path) -> None:
        self.home = Path(os.path.abspath(home))

    def _watched(self) -> list[Path]:
        paths = [self.home / name for name in HOME_SETTINGS_FILES]
        total = 0
        for folder in HOME_WATCHED_DIRS:
            for dirpath, dirnames, filenames in os.walk(self.home / folder, followlinks=False):
                dirnames.sort()
                for name in sorted(filenames):
                    path = Path(dirpath) / name
                    try:
                        size = path.lstat().st_size
                    except OSError:
                        continue
                    if len(paths) >= MAX_FILES or size > MAX_FILE_BYTES:
                        continue
                    total += size
                    if total > MAX_TOTAL_BYTES:
                        return paths
                    paths.append(path)
        return paths

    def snapshot(self) -> SettingsSnapshot:
        return SettingsSnapshot({path: _read(path) for path in self._watched()})

    def restore_if_tampered(self, before: SettingsSnapshot) -> str | None:
        """Undo changes no Invincat code made; returns the report, or None if none."""
        now_paths = set(self._watched())
        changed: list[str] = []
        saved: list[str] = []
        failed: list[str] = []
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        for path in sorted(set(before.files) | now_paths):
            old = before.files.get(path)  # None: no file before (a planted skill)
            locked = path.name in LOCKED_FILES and path.parent == self.home
            lock = file_lock.exclusive(path) if locked else contextlib.nullcontext()
            with lock:
                now = _read(path)
                if now == old or sanctioned.explains(path, old, now):
                    continue
                rel = path.relative_to(self.home).as_posix()
                if now is not None:
                    copy = self.home / "tampered" / stamp / rel
                    try:
                        # 0600 in 0700 folders, nothing followed below the home.
                        private_files.atomic_write(copy, now, root=self.home, durable=False)
                        saved.append(str(copy))
                    except OSError as exc:  # undoing the change matters more than the copy
                        saved.append(f"no copy of {rel}: {exc.strerror or exc}")
                try:
                    _put_back(path, old)
                except OSError as exc:
                    failed.append(f"{rel} ({exc.strerror or exc})")
                    continue
                changed.append(rel)
        if not changed and not failed:
            return None
        parts = []
        if changed:
            kept = f" (modified copies saved: {', '.join(saved)})" if saved else ""
            parts.append(
                f"{', '.join(changed)} in {self.home} was changed by a tool call, not by "
                f"Invincat; the change was undone{kept}"
            )
        if failed:
            parts.append(
                f"{', '.join(failed)} in {self.home} was changed by a tool call and could not "
                "be restored; check it by hand before trusting it"
            )
        return (
            "Settings protection: "
            + "; ".join(parts)
            + ". Approval rules, trust, MCP config, settings and skills may only be changed by "
            "the user."
        )


def _put_back(path: Path, old: bytes | None) -> None:
    """Restore `old` at `path` (None: remove the file that appeared)."""
    if old is not None and os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)  # a folder planted where the settings file was
    if old is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    else:
        _write(path, old, 0o600)


def _read(path: Path) -> bytes | None:
    # Through symlinks: a config.toml linked from a dotfiles repo is watched by content.
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def _write(path: Path, data: bytes, mode: int) -> None:
    path = Path(os.path.realpath(path))  # restore the content, keep the user's symlink
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o777 if path.is_file() else mode
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".restore")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)
