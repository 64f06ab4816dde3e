"""The rewind API every front end calls: a thread's turns and what each changed, the
plan to go back to before turn N (or to undo the last rewind), and the restore.

No agent stack is needed for code: the thread's turns come from its latest checkpoint
through the light reader (runtime/checkpoint_reader.py). The conversation part runs on
the Session (`Session.rewind_conversation`, conversation.py). Front ends only translate:
the CLI prints these, the REPL asks with them, an editor would send them as JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from invincat_server.runtime.checkpoints import manifests as mf
from invincat_server.runtime.checkpoints.manifests import Manifest
from invincat_server.runtime.checkpoints.planning import RewindPlan, plan
from invincat_server.runtime.checkpoints.restore import RestoreResult, restore
from invincat_server.runtime.checkpoints.store import CheckpointError, ObjectStore
from invincat_server.runtime.config import Settings
from invincat_server.runtime.errors import ThreadBusyError, UnknownThreadError
from invincat_server.runtime.wording import plural

PROMPT_PREVIEW = 80


@dataclass
class TurnSummary:
    number: int
    prompt: str
    files: list[str] = field(default_factory=list)
    """The paths this turn changed (as its checkpoints recorded them)."""

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.number, "prompt": self.prompt, "files": self.files}


@dataclass
class ThreadCheckpoints:
    thread_id: str
    turns: list[TurnSummary]
    rewinds: list[int]
    """The numbers of the rewind checkpoints (the last one is what `undo` restores)."""
    problems: list[str]
    manifests: list[Manifest]
    message_ids: list[str | None]


def _prompt_of(message: dict[str, Any]) -> str:
    extra = message.get("additional_kwargs")
    text = extra.get("invincat_prompt") if isinstance(extra, dict) else None
    if not isinstance(text, str):
        content = message.get("content")
        text = content if isinstance(content, str) else ""
    line = " ".join(text.split())
    return line if len(line) <= PROMPT_PREVIEW else line[: PROMPT_PREVIEW - 1] + "…"


class Rewinder:
    """Rewinds for the project rooted at `root`. `running`: the id of the turn this
    process runs on a thread, if any (a Session's `rewinder()` passes its own); without
    it only approvals waiting tell a busy thread (`ensure_quiet`)."""

    def __init__(
        self,
        settings: Settings,
        root: Path,
        running: Callable[[str], str | None] | None = None,
    ) -> None:
        self.settings = settings
        self.store = ObjectStore(settings.home, root)
        self._running = running

    def ensure_quiet(self, thread_id: str) -> None:
        """Refuse a rewind, code or conversation alike (ThreadBusyError, nothing changed),
        while a turn of the thread runs here or an approval of it waits for a decision —
        asked by whichever process, it is in the thread store: that turn would go on from
        files or messages the rewind took away."""
        from invincat_server.runtime.thread_store import read_saved

        turn_id = self._running(thread_id) if self._running is not None else None
        if turn_id is not None:
            raise ThreadBusyError(
                f"Thread {thread_id} is running turn {turn_id}; wait for it or cancel it "
                "before rewinding. Nothing changed."
            )
        _, pending = read_saved(self.settings, None)
        waiting = sum(1 for approval in pending if approval.thread_id == thread_id)
        if waiting:
            raise ThreadBusyError(
                f"Thread {thread_id} has {plural(waiting, 'approval')} waiting for a decision; "
                f"answer {'it' if waiting == 1 else 'them'} (`invincat chat --thread "
                f"{thread_id}`) before rewinding. Nothing changed."
            )

    def _known(self, thread_id: str) -> None:
        from invincat_server.runtime.thread_store import read_saved

        threads, _ = read_saved(self.settings, None)
        if not any(t.thread_id == thread_id for t in threads):
            raise UnknownThreadError(
                f"Unknown thread {thread_id!r}; list threads with `invincat threads list`."
            )

    def checkpoints(self, thread_id: str) -> ThreadCheckpoints:
        """The thread's turns (numbered from 1, as the conversation holds them now), what
        each changed, its rewinds, and a sentence per unreadable checkpoint."""
        from invincat_server.runtime.thread_store import latest_messages

        self._known(thread_id)
        messages = latest_messages(self.settings, thread_id) or []
        humans = [m for m in messages if m.get("type") == "human"]
        manifests, problems = mf.load_all(self.store, thread_id)
        ids = [m.get("id") if isinstance(m.get("id"), str) else None for m in humans]
        turns = [TurnSummary(i + 1, _prompt_of(m)) for i, m in enumerate(humans)]
        for manifest in manifests:
            number = self._turn_of(manifest, ids)
            if number is not None:
                files = turns[number - 1].files
                files.extend(p for p in manifest.files if p not in files)
        rewinds = [m.seq for m in manifests if m.kind == "rewind"]
        return ThreadCheckpoints(thread_id, turns, rewinds, problems, manifests, ids)

    @staticmethod
    def _turn_of(manifest: Manifest, ids: list[str | None]) -> int | None:
        if manifest.kind != "turn":
            return None
        if manifest.message_id is not None:
            return ids.index(manifest.message_id) + 1 if manifest.message_id in ids else None
        if manifest.turn is not None and 1 <= manifest.turn <= len(ids):
            return manifest.turn
        return None

    def plan_to(self, thread_id: str, to_turn: int) -> RewindPlan:
        """The files as they were before turn `to_turn` (1 = the first) started."""
        found = self.checkpoints(thread_id)
        count = len(found.turns)
        if not 1 <= to_turn <= count:
            raise CheckpointError(
                f"Thread {thread_id} has {count} turn(s); --to takes a turn from 1 to {count}."
                if count
                else f"Thread {thread_id} has no turns to rewind."
            )
        result = plan(self.store, thread_id, found.manifests, self._start(found, to_turn))
        result.problems = found.problems
        return result

    def _start(self, found: ThreadCheckpoints, to_turn: int) -> int:
        """The checkpoint a rewind to before turn `to_turn` starts from: the first change
        of the first turn numbered `to_turn` or later. Not "after the last checkpoint of
        an earlier turn": a rewind recorded after turn N-1, or the checkpoints of a turn
        a conversation rewind made the thread forget, lie between and are not part of
        turn N. When those turns changed nothing, nothing is restored."""
        later = [
            m.seq
            for m in found.manifests
            if (number := self._turn_of(m, found.message_ids)) is not None and number >= to_turn
        ]
        if later:
            return min(later)
        return max((m.seq for m in found.manifests), default=0) + 1

    def plan_undo(self, thread_id: str) -> RewindPlan:
        """The files as they were before the thread's last rewind."""
        found = self.checkpoints(thread_id)
        if not found.rewinds:
            raise CheckpointError(f"Thread {thread_id} has no rewind to undo.")
        result = plan(self.store, thread_id, found.manifests, found.rewinds[-1])
        result.problems = found.problems
        return result

    def restore(self, rewind: RewindPlan, confirmed: set[str]) -> RestoreResult:
        """Apply `rewind`; files changed by hand are overwritten only when named in
        `confirmed`. The restore is recorded first (undoable with `plan_undo`). Refused
        (ThreadBusyError) while the thread is busy (`ensure_quiet`)."""
        self.ensure_quiet(rewind.thread_id)
        return restore(self.store, rewind, confirmed)
