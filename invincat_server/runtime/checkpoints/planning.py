"""A rewind's plan: which files go back to what, the diff of each, and which of them
something other than Invincat changed since Invincat last wrote them.

The state before checkpoint `start` of a thread, for one path, is the *before* recorded
by the earliest manifest numbered `start` or later that names the path: nothing else
changed it since (as far as Invincat can know — a hand edit is told by comparing the
file with what Invincat last left there, the *after* of the latest manifest naming it).
Paths no such manifest names are not touched.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from invincat_server.runtime.checkpoints.manifests import FileState, Manifest
from invincat_server.runtime.checkpoints.store import CheckpointError, ObjectStore
from invincat_server.runtime.checkpoints.tree import current_state, read_project_file
from invincat_server.runtime.tools.edits import unified_diff

MAX_DIFF_BYTES = 1_000_000
"""Bigger files are named in the plan, not diffed."""


@dataclass
class FilePlan:
    path: str
    current: FileState
    target: FileState
    changed_by_hand: bool
    """The file differs from what Invincat last left there (or that is not known): a
    restore overwrites it only when the user confirmed this path by name."""
    diff: str = ""
    problem: str | None = None
    """Why this file cannot be restored (its blob is missing or corrupt), else None."""

    @property
    def action(self) -> str:
        if self.target.absent:
            return "delete"
        if self.current.absent:
            return "create"
        if self.current.digest == self.target.digest:
            return "chmod"
        return "modify"

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "action": self.action,
            "changed_by_hand": self.changed_by_hand,
            "mode": None if self.target.absent else oct(self.target.mode),
            "diff": self.diff,
            "problem": self.problem,
        }


@dataclass
class RewindPlan:
    thread_id: str
    start_seq: int
    files: list[FilePlan] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def conflicts(self) -> list[str]:
        return [f.path for f in self.files if f.changed_by_hand and f.problem is None]


def _text(store: ObjectStore, state: FileState) -> str | None:
    """The blob as text for a diff; None when absent; CheckpointError when unusable."""
    if state.digest is None:
        return None
    data = store.get(state.digest)
    if len(data) > MAX_DIFF_BYTES or b"\x00" in data:
        raise ValueError("binary or large")
    return data.decode("utf-8", "replace")


def _disk_text(store: ObjectStore, path: str) -> str | None:
    found = read_project_file(store.root, path)
    if found is None:
        return None
    data = found[0]
    if len(data) > MAX_DIFF_BYTES or b"\x00" in data:
        raise ValueError("binary or large")
    return data.decode("utf-8", "replace")


def file_diff(store: ObjectStore, path: str, current: FileState, target: FileState) -> str:
    """The unified diff from what `path` holds now to what the rewind puts there."""
    try:
        old = _disk_text(store, path) if not current.absent else None
        new = _text(store, target)
    except ValueError:
        return f"Binary or large file {path} differs\n"
    if new is None:
        lines = [] if old is None else old.splitlines(keepends=True)
        return "".join(difflib.unified_diff(lines, [], fromfile=f"a/{path}", tofile="/dev/null"))
    text = unified_diff(path, old, new)
    if not text and current.mode != target.mode:
        text = f"mode {oct(current.mode)} → {oct(target.mode)}: {path}\n"
    return text


def targets_since(
    manifests: list[Manifest], start_seq: int
) -> tuple[dict[str, FileState], dict[str, FileState | None]]:
    """(path → its state before checkpoint `start_seq`: the *before* of the earliest
    checkpoint from `start_seq` on that names it; path → what Invincat last left there)."""
    targets: dict[str, FileState] = {}
    last: dict[str, FileState | None] = {}
    for manifest in manifests:
        for path, change in manifest.files.items():
            if manifest.seq >= start_seq:
                targets.setdefault(path, change.before)
            last[path] = change.after
    return targets, last


def plan(
    store: ObjectStore, thread_id: str, manifests: list[Manifest], start_seq: int
) -> RewindPlan:
    result = RewindPlan(thread_id, start_seq)
    targets, last = targets_since(manifests, start_seq)
    for path in sorted(targets):
        target = targets[path]
        current = current_state(store, path, keep=False)
        if current == target:
            continue
        written = last.get(path)
        entry = FilePlan(path, current, target, written is None or written != current)
        try:
            if target.digest is not None:
                store.get(target.digest)
            entry.diff = file_diff(store, path, current, target)
        except CheckpointError as exc:
            entry.problem = str(exc)
        except OSError as exc:
            entry.problem = f"Cannot read {path}: {exc.strerror or exc}."
        result.files.append(entry)
    return result
