"""The running turn's recorder: the file tools and `execute` tell it before they change
the workspace, and it keeps what is needed to undo the change.

One `TurnRecorder` per running turn, set in a context variable by the turn runner (the
tools, and the LangGraph tasks they spawn, copy the turn's context; tools run outside a
turn — tests, a tool called alone — find none and record nothing). Its manifest is
written before the first change it describes, and rewritten after each later one.

- write_file / edit_file: `before_write(path)` keeps the file's bytes and mode (or
  "absent") the first time the turn changes it, `after_write(path)` notes what Invincat
  left there (a later hand edit is then told apart).
- execute: `command()` snapshots the project's tracked-and-unignored files before an
  approved command runs (tree.py: a stat cache, so unchanged files cost a stat), and
  after it the paths whose content or mode differ join the manifest.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from invincat_server.runtime.checkpoints import manifests as mf
from invincat_server.runtime.checkpoints.manifests import ABSENT, Change, Manifest
from invincat_server.runtime.checkpoints.store import ObjectStore
from invincat_server.runtime.checkpoints.tree import current_state, snapshot

log = logging.getLogger("invincat.checkpoints")

TurnIdentity = tuple[int | None, str | None]
"""(the turn's number in its thread, the id of the user message that started it)."""

_CURRENT: contextvars.ContextVar[TurnRecorder | None] = contextvars.ContextVar(
    "invincat_turn_recorder", default=None
)


class TurnRecorder:
    """What one running turn changed, kept in one manifest of its thread."""

    def __init__(
        self, store: ObjectStore, thread_id: str, identify: Callable[[], TurnIdentity]
    ) -> None:
        self.store = store
        self.thread_id = thread_id
        self._identify = identify
        self._manifest: Manifest | None = None
        self._lock = asyncio.Lock()  # parallel tool calls of one step share the manifest

    @property
    def manifest(self) -> Manifest | None:
        return self._manifest

    def name_turn(self, message_id: str) -> None:
        """The user message this turn sends to the main agent from here on (the plan
        flow's handoff): its later changes are checkpointed under it."""
        self._identify = lambda: (None, message_id)
        if self._manifest is not None and self._manifest.message_id != message_id:
            self._manifest = None  # the next change opens a checkpoint of the new message

    def relative(self, path: Path) -> str | None:
        try:
            rel = Path(path).relative_to(self.store.root).as_posix()
        except ValueError:
            return None
        return mf.safe_relative(rel)

    def _open(self) -> Manifest:
        if self._manifest is None:
            turn, message_id = self._identify()
            seq = mf.next_seq(self.store, self.thread_id)
            self._manifest = Manifest(seq, "turn", message_id, turn, mf.now())
        return self._manifest

    def _note_before(self, rel: str, buffer: str | None) -> None:
        manifest = self._open()
        if rel not in manifest.files:
            state = current_state(self.store, rel)
            if buffer is not None:
                # Open in an editor: what the user saw there (unsaved text included) is
                # what a rewind gives back, with the file's mode.
                digest = self.store.put(buffer.encode("utf-8", "surrogatepass"))
                state = mf.FileState(digest, 0o644 if state.absent else state.mode)
            manifest.files[rel] = Change(state)
            mf.save(self.store, self.thread_id, manifest)

    def _note_after(self, rel: str) -> None:
        manifest = self._open()
        change = manifest.files.setdefault(rel, Change(ABSENT))
        change.after = current_state(self.store, rel, keep=False)
        mf.save(self.store, self.thread_id, manifest)

    async def before_write(self, path: Path, buffer: str | None = None) -> None:
        """`buffer`: the text an editor shows for the file, when it is open there."""
        rel = self.relative(path)
        if rel is not None:
            async with self._lock:
                await asyncio.to_thread(self._note_before, rel, buffer)

    async def after_write(self, path: Path, *, on_disk: bool) -> None:
        """`on_disk` False: an editor took the change into its buffer, so what the disk
        will hold is not known (the check for hand edits then asks)."""
        rel = self.relative(path)
        if rel is None:
            return
        async with self._lock:
            if on_disk:
                await asyncio.to_thread(self._note_after, rel)
            elif self._manifest is not None and rel in self._manifest.files:
                self._manifest.files[rel].after = None
                await asyncio.to_thread(mf.save, self.store, self.thread_id, self._manifest)

    def _after_command(self, pre: dict[str, mf.FileState]) -> None:
        post = snapshot(self.store)
        changed = [
            rel
            for rel in sorted(set(pre) | set(post))
            if pre.get(rel, ABSENT) != post.get(rel, ABSENT)
        ]
        if not changed:
            return
        manifest = self._open()
        for rel in changed:
            change = manifest.files.setdefault(rel, Change(pre.get(rel, ABSENT)))
            change.after = post.get(rel, ABSENT)
        mf.save(self.store, self.thread_id, manifest)

    @contextlib.asynccontextmanager
    async def command(self) -> AsyncIterator[None]:
        """Around one approved `execute`: the tree before, the changed paths after."""
        async with self._lock:
            pre = await asyncio.to_thread(snapshot, self.store)
        try:
            yield
        finally:
            async with self._lock:
                await asyncio.to_thread(self._after_command, pre)


def current() -> TurnRecorder | None:
    return _CURRENT.get()


def set_current(recorder: TurnRecorder | None) -> None:
    """For the turn runner, inside the turn task's own context."""
    _CURRENT.set(recorder)


async def before_write(path: Path, buffer: str | None = None) -> None:
    """Called by write_file / edit_file before they change `path` (no turn: nothing);
    `buffer`: the editor's text of it, when it is open in one."""
    recorder = _CURRENT.get()
    if recorder is not None:
        await _guarded(recorder.before_write(path, buffer), must=True)


async def after_write(path: Path, *, on_disk: bool) -> None:
    recorder = _CURRENT.get()
    if recorder is not None:
        await _guarded(recorder.after_write(path, on_disk=on_disk), must=False)


@contextlib.asynccontextmanager
async def around_command() -> AsyncIterator[None]:
    recorder = _CURRENT.get()
    if recorder is None:
        yield
        return
    async with recorder.command():
        yield


async def _guarded(work: object, *, must: bool) -> None:
    """A failure to record before a change stops the change (OSError to the tool: the
    model is told); one after it is logged (the change is made, the undo data is kept)."""
    assert asyncio.iscoroutine(work)
    try:
        await work
    except OSError:
        if must:
            raise
        log.exception("recording a checkpoint failed")
