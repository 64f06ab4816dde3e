"""Rewinding from an editor: for a file open there, the buffer is the file.

An agent's edit of an open file goes into the editor's buffer and reaches the disk when
the user saves (runtime/tools/documents.py). A rewind from an editor does the same, so
the editor's undo takes it back and a save never meets a file that changed under the
buffer (editors warn then, or refuse). For a file open in the editor:

- what it holds now is the buffer's text (unsaved changes included) with the file's mode
  on disk, and the diff runs from that text;
- it counts as changed by hand (kept unless confirmed by name) when the disk differs from
  what Invincat last left there (planning.py's rule) or the buffer differs from the disk
  (unsaved changes: Invincat cannot tell whose they are);
- its restored text goes to the buffer (`EditorPlan.buffers`, which the front end applies)
  only when that is text with the mode the file has now; a delete, a mode change, a
  binary or a large file goes to the disk, as for a closed file;
- the rewind's checkpoint records it as an agent's buffer edit is recorded: before = the
  buffer's text, after = not known (the disk changes when the user saves), so the rewind
  can be undone like any other.

Front ends pass the texts of their open files (`open_texts`: project-relative path →
text); one without buffers passes none and gets the plain rewind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from invincat_server.runtime import private_files
from invincat_server.runtime.checkpoints import manifests as mf
from invincat_server.runtime.checkpoints.manifests import Change, FileState, Manifest
from invincat_server.runtime.checkpoints.planning import (
    MAX_DIFF_BYTES,
    FilePlan,
    RewindPlan,
    targets_since,
)
from invincat_server.runtime.checkpoints.restore import RestoreResult
from invincat_server.runtime.checkpoints.rewind import Rewinder, ThreadCheckpoints
from invincat_server.runtime.checkpoints.store import CheckpointError, digest_of
from invincat_server.runtime.tools.edits import unified_diff


class TurnOutOfRange(CheckpointError):
    """The turn asked for is not one of the thread's (the message says which are)."""


@dataclass
class EditorPlan:
    plan: RewindPlan
    """Every file the rewind changes; an open one's `current` is its buffer."""
    buffers: dict[str, str] = field(default_factory=dict)
    """Path → the text its editor buffer gets (these files are not written on disk)."""
    shown: dict[str, str] = field(default_factory=dict)
    """Path → the text its buffer shows now (what undoing the rewind gives back)."""


@dataclass
class EditorRestore:
    result: RestoreResult
    """What the disk part did; the buffers' paths are added by `applied`/`refused`."""
    buffers: dict[str, str] = field(default_factory=dict)
    """Path → text, for the front end to put in the editor buffers now."""

    def applied(self, path: str) -> None:
        self.result.restored.append(path)

    def refused(self, path: str, why: str) -> None:
        self.result.failed[path] = why


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _target_text(rewinder: Rewinder, target: FileState) -> str | None:
    """The target as text a buffer can hold exactly, else None (the disk takes it)."""
    if target.digest is None:
        return None
    try:
        data = rewinder.store.get(target.digest)
    except CheckpointError:
        return None  # the plan names the problem; the disk route reports it
    if len(data) > MAX_DIFF_BYTES or b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def check_turn(found: ThreadCheckpoints, to_turn: int) -> None:
    """TurnOutOfRange unless `to_turn` is one of the thread's turns."""
    count = len(found.turns)
    if not 1 <= to_turn <= count:
        raise TurnOutOfRange(
            f"Thread {found.thread_id} has {count} turn(s); choose a turn from 1 to {count}."
            if count
            else f"Thread {found.thread_id} has no turns to rewind."
        )


def plan_in_editor(
    rewinder: Rewinder,
    thread_id: str,
    *,
    to_turn: int | None,
    open_texts: Mapping[str, str],
) -> EditorPlan:
    """The rewind to before turn `to_turn` (None: undo the last rewind), with the files
    open in the editor (`open_texts`) taken from and restored to their buffers."""
    found = rewinder.checkpoints(thread_id)
    if to_turn is None:
        rewind = rewinder.plan_undo(thread_id)
    else:
        check_turn(found, to_turn)
        rewind = rewinder.plan_to(thread_id, to_turn)
    result = EditorPlan(rewind)
    if not open_texts:
        return result
    targets, last = targets_since(found.manifests, rewind.start_seq)
    by_path = {entry.path: entry for entry in rewind.files}
    for path, text in open_texts.items():
        target = targets.get(path)
        if target is None:
            continue  # the rewind does not touch it
        planned = by_path.get(path)
        on_disk = planned.current if planned is not None else target
        buffer = FileState(digest_of(_encoded(text)), on_disk.mode)
        unsaved = buffer.digest != on_disk.digest
        new_text = _target_text(rewinder, target)
        if new_text is None or on_disk.absent or on_disk.mode != target.mode:
            if planned is not None and unsaved:
                planned.changed_by_hand = True  # the disk route would lose unsaved text
            continue
        if buffer == target:
            if planned is not None:  # the buffer shows it already; the save does the rest
                rewind.files.remove(planned)
            continue
        written = last.get(path)
        entry = FilePlan(
            path,
            buffer,
            target,
            written is None or written != on_disk or unsaved,
            diff=unified_diff(path, text, new_text),
        )
        if planned is not None:
            rewind.files[rewind.files.index(planned)] = entry
        else:
            rewind.files.append(entry)
        result.buffers[path] = new_text
        result.shown[path] = text
    rewind.files.sort(key=lambda entry: entry.path)
    return result


def restore_in_editor(
    rewinder: Rewinder, editor_plan: EditorPlan, confirmed: set[str]
) -> EditorRestore:
    """Restore the disk part (recorded first, as every rewind) and record the buffers'
    part in the same checkpoint, before the front end changes them; files changed by
    hand are restored only when named in `confirmed`."""
    rewind = editor_plan.plan
    in_buffer = editor_plan.buffers
    on_disk = RewindPlan(
        rewind.thread_id,
        rewind.start_seq,
        [entry for entry in rewind.files if entry.path not in in_buffer],
        rewind.problems,
    )
    result = rewinder.restore(on_disk, confirmed)
    chosen = {
        entry.path: entry
        for entry in rewind.files
        if entry.path in in_buffer and (not entry.changed_by_hand or entry.path in confirmed)
    }
    result.skipped.extend(
        path for path in in_buffer if path not in chosen and path not in result.skipped
    )
    if chosen:
        store = rewinder.store
        manifest = _rewind_manifest(rewinder, rewind.thread_id, result.checkpoint)
        for path, entry in chosen.items():
            # As the recorder notes a buffer edit: the text shown, the disk's future unknown.
            store.put(_encoded(editor_plan.shown[path]), entry.current.digest)
            manifest.files[path] = Change(entry.current, None)
        mf.save(store, rewind.thread_id, manifest)
        result.checkpoint = manifest.seq
    return EditorRestore(result, {path: in_buffer[path] for path in chosen})


def _rewind_manifest(rewinder: Rewinder, thread_id: str, seq: int | None) -> Manifest:
    """The rewind checkpoint the disk part just wrote, or a new one when it wrote none."""
    store = rewinder.store
    if seq is None:
        return Manifest(mf.next_seq(store, thread_id), "rewind", None, None, mf.now())
    data = private_files.read_bytes(mf.manifest_path(store, thread_id, seq), root=store.home)
    if data is None:
        raise CheckpointError(f"The rewind's checkpoint {seq} vanished while it was written.")
    return mf.parse(data, f"checkpoint {seq}")
