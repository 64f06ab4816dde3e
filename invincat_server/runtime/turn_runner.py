"""The host of a Session's turns: starts them, hears their events, cleans up after them.

This is the small public interface a `Turn` and the plan flow use (`dispatch`,
`take_notices`, `turn_cancelled`, `describe_failure`, `turn_finished`, `turn_ended`,
`context_usage`, `approvals`, `stack`); the Session uses it to launch, resume and cancel
turns and to know which thread is busy.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.approval_broker import ApprovalBroker, Resume
from invincat_server.runtime.checkpoints.recorder import TurnRecorder
from invincat_server.runtime.checkpoints.recorder import set_current as set_recorder
from invincat_server.runtime.checkpoints.store import ObjectStore
from invincat_server.runtime.config import Settings
from invincat_server.runtime.errors import SessionError, ThreadBusyError, describe_error
from invincat_server.runtime.events import ContextUsage, Event
from invincat_server.runtime.events import Error as ErrorEvent
from invincat_server.runtime.tools.documents import DocumentSource
from invincat_server.runtime.tools.turn_documents import context_with
from invincat_server.runtime.turn import Turn, TurnStatus

if TYPE_CHECKING:
    from invincat_server.runtime.agent_stack import AgentStack

log = logging.getLogger("invincat.session")

EventListener = Callable[[Turn, Event], None]


class TurnRunner:
    """Live turns, busy threads, event listeners and notices for one Session."""

    def __init__(self, settings: Settings, root: Path | None = None) -> None:
        """`root`: the workspace root whose files turns change; with it, each turn
        records rewind checkpoints (runtime/checkpoints)."""
        self.settings = settings
        self.root = root
        self._stack: AgentStack | None = None
        self._approvals: ApprovalBroker | None = None
        self.turns: dict[str, Turn] = {}
        self._busy_threads: dict[str, Turn] = {}
        self._listeners: list[EventListener] = []
        self._documents: dict[str, DocumentSource] = {}
        """thread id → the document source its turns use (runtime/tools/turn_documents.py)."""
        self._notices: list[str] = []
        # Checkpoint pruning runs shielded (see _compact_thread): close() waits for it, so
        # the database is never closed under a DELETE, even when the follow-up that
        # started it was cancelled at the follow-up deadline.
        self._housekeeping: set[asyncio.Task[None]] = set()
        self.closing = False

    def attach(self, stack: AgentStack, approvals: ApprovalBroker) -> None:
        """The stack turns run on, once the Session opened it."""
        self._stack, self._approvals = stack, approvals

    @property
    def is_attached(self) -> bool:
        return self._stack is not None

    @property
    def stack(self) -> AgentStack:
        if self._stack is None:
            raise SessionError("Session is not open; call `await session.open()` first.")
        return self._stack

    @property
    def approvals(self) -> ApprovalBroker:
        if self._approvals is None:
            raise SessionError("Session is not open; call `await session.open()` first.")
        return self._approvals

    # for the Session ---------------------------------------------------------
    def add_listener(self, listener: EventListener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: EventListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def bind_documents(self, thread_id: str, documents: DocumentSource | None) -> None:
        """The document source every later turn of `thread_id` (new, resumed, reopened)
        reads and writes through; None: the Session's own."""
        if documents is None:
            self._documents.pop(thread_id, None)
        else:
            self._documents[thread_id] = documents

    def notify(self, message: str) -> None:
        running = [t for t in self.turns.values() if not t.done]
        if not running:
            self._notices.append(message)
        for turn in running:
            turn.emit(ErrorEvent(message=message))

    def running(self, thread_id: str) -> Turn | None:
        """The turn running on `thread_id`, if any."""
        turn = self._busy_threads.get(thread_id)
        return turn if turn is not None and not turn.done else None

    def ensure_idle(self, thread_id: str) -> None:
        running = self.running(thread_id)
        if running is not None:
            raise ThreadBusyError(
                f"Thread {thread_id} is already running turn {running.turn_id}; "
                "wait for it or cancel it first."
            )

    def has_turn(self, thread_id: str) -> bool:
        """Whether a turn of this process ran on `thread_id` and was not forgotten."""
        return self._busy_threads.get(thread_id) is not None

    def launch(
        self,
        thread_id: str,
        body: Callable[[Turn], Awaitable[TurnStatus]],
        message_id: str | None = None,
    ) -> Turn:
        """`message_id`: the id of the user message this turn sends (its checkpoints
        are named by it); None for a resumed turn, whose message is already saved."""
        turn = Turn(self, thread_id, "turn_" + uuid.uuid4().hex[:12])
        self.turns[turn.turn_id] = turn
        self._busy_threads[thread_id] = turn
        context = context_with(self._documents.get(thread_id))
        if self.root is not None:
            context.run(set_recorder, self._recorder(thread_id, message_id))
        turn.task = asyncio.create_task(
            turn.run(body), name=f"invincat-{turn.turn_id}", context=context
        )
        return turn

    def _recorder(self, thread_id: str, message_id: str | None) -> TurnRecorder:
        """The turn's checkpoint recorder, named by the id of the turn's user message:
        the one it sends, or (a resumed turn) the thread's latest, read from its saved
        checkpoint."""
        assert self.root is not None
        settings = self.settings

        def identify() -> tuple[int | None, str | None]:
            from invincat_server.runtime.thread_store import latest_messages

            if message_id is not None:
                return None, message_id
            messages = latest_messages(settings, thread_id) or []
            humans = [m for m in messages if m.get("type") == "human"]
            if not humans:
                return None, None
            last = humans[-1].get("id")
            return len(humans), last if isinstance(last, str) else None

        return TurnRecorder(ObjectStore(self.settings.home, self.root), thread_id, identify)

    async def resume(self, resume: Resume) -> Turn:
        """Resume a checkpointed interrupt (the process that asked is gone) with the
        decisions taken; `resume.resolved` (the decisions that last resolve took) is
        reported right after `turn_start`."""
        from langgraph.types import Command

        graph = self.stack.agent(resume.agent)
        config = self.stack.config(resume.thread_id, agent=resume.agent)
        state = await graph.aget_state(config)
        ids = [
            item.id
            for item in state.interrupts
            if isinstance(item.value, dict) and item.value.get("batch_id") == resume.batch_id
        ]
        value = {"decisions": resume.decisions}
        command: Command[Any] = Command(resume={ids[0]: value}) if ids else Command(resume=value)

        async def body(turn: Turn) -> None:
            for event in resume.resolved:
                turn.emit(event)
            await turn.drive(graph, command, config)

        return self.launch(resume.thread_id, self.resumed_body(resume.agent, body))

    def reopen(self, thread_id: str, agent: str, batches: set[str]) -> Turn:
        """A turn that announces the approvals of `batches` that `agent` left pending on
        `thread_id` again, and goes on once each is decided."""
        records = self.stack.records
        graph = self.stack.agent(agent)
        config = self.stack.config(thread_id, agent=agent)

        async def resume(turn: Turn) -> None:
            state = await graph.aget_state(config)
            interrupts = [
                (item.id, dict(item.value))
                for item in state.interrupts
                if isinstance(item.value, dict) and item.value.get("batch_id") in batches
            ]
            if not interrupts:
                # Records say pending, the checkpoint has no pause to resume: never leave
                # them offered forever.
                await records.close_pending(thread_id, "cancelled")
                raise SessionError(
                    f"The turn that asked for approval on thread {thread_id} cannot be "
                    "resumed (its checkpoint has no pause); the approval was closed."
                )
            await turn.drive_pending(graph, interrupts, config)

        return self.launch(thread_id, self.resumed_body(agent, resume))

    async def sync_interrupts(self, thread_id: str) -> None:
        """Re-register interrupts found in the checkpoint (e.g. written just before a crash)."""
        if self.has_turn(thread_id):
            return
        items: list[Any] = []
        for agent in ("main", "planner"):
            graph = self.stack.agent(agent)
            state = await graph.aget_state(self.stack.config(thread_id, agent=agent))
            items += list(getattr(state, "interrupts", ()) or ())
        await self.approvals.adopt(thread_id, items)

    @staticmethod
    def resumed_body(
        agent: str, resume: Callable[[Turn], Awaitable[None]]
    ) -> Callable[[Turn], Awaitable[TurnStatus]]:
        """A resumed turn's body: `resume` the paused agent, then, for a plan, execute it."""

        async def body(turn: Turn) -> TurnStatus:
            await resume(turn)
            if agent == "planner":
                from invincat_server.runtime.plan_flow import after_planner

                return await after_planner(turn)
            return "completed"

        return body

    async def close(self, followup_timeout: float) -> None:
        """Let background work finish (up to `followup_timeout` s), then stop every turn."""
        followups = [t for turn in self.turns.values() for t in turn.followups if not t.done()]
        if followups:
            _, late = await asyncio.wait(followups, timeout=followup_timeout)
            for task in late:
                task.cancel()
        self.closing = True
        for turn in list(self.turns.values()):
            if turn.task is not None and not turn.task.done():
                turn.task.cancel()
                try:
                    await turn.task
                except asyncio.CancelledError:
                    pass
        if self._housekeeping:
            await asyncio.wait(list(self._housekeeping))

    # for Turn ----------------------------------------------------------------
    def dispatch(self, turn: Turn, event: Event) -> None:
        for listener in self._listeners:
            try:
                listener(turn, event)
            except Exception:
                log.exception("event listener failed")

    def take_notices(self, turn: Turn) -> None:
        notices, self._notices = self._notices, []
        for message in notices:
            turn.emit(ErrorEvent(message=message))

    def describe_failure(self, exc: BaseException) -> str:
        """What to tell the user about the exception that failed a turn."""
        log.debug("turn failed", exc_info=exc)
        return describe_error(exc, self.settings)

    async def turn_cancelled(self, turn: Turn) -> None:
        if self.closing:
            return
        await self.stack.records.close_pending(turn.thread_id, "cancelled")

    def turn_finished(self, turn: Turn) -> None:
        """Called right before `turn_end` is emitted."""
        if self._busy_threads.get(turn.thread_id) is turn:
            del self._busy_threads[turn.thread_id]
        if self._approvals is not None:
            self._approvals.forget(turn)

    def turn_ended(self, turn: Turn) -> None:
        """Called right after `turn_end` was emitted."""
        if self._stack is None:
            return
        if turn.status == "completed":
            turn.add_followup(asyncio.create_task(self._after_turn(turn)))
        turn.add_followup(asyncio.create_task(self._compact_thread(turn.thread_id)))
        if self.root is not None:
            turn.add_followup(asyncio.create_task(self._cap_checkpoints(turn.thread_id)))

    def context_usage(self, thread_id: str, message: Any) -> ContextUsage:
        usage = getattr(message, "usage_metadata", None) or {}
        tokens = int(usage.get("total_tokens") or 0)
        if not tokens:
            from langchain_core.messages.utils import count_tokens_approximately

            tokens = count_tokens_approximately([message])
        return ContextUsage(tokens=tokens, limit=self.settings.context_window)

    # after a turn ------------------------------------------------------------
    async def _after_turn(self, turn: Turn) -> None:
        """Background work after a completed turn (never delays its `turn_end`): memory
        cleanup, re-anchoring of moved citations, then extraction by the memory agent when
        the turn is worth it."""
        stack = self.stack
        state = await stack.graph.aget_state(stack.config(turn.thread_id))
        messages = state.values.get("messages", [])
        await asyncio.to_thread(stack.memory.cleanup)
        await asyncio.to_thread(stack.memory.reanchor)
        if stack.memory_agent.should_run(turn.thread_id, messages):
            await stack.memory_agent.run(turn.thread_id, messages, turn.emit)

    async def _cap_checkpoints(self, thread_id: str) -> None:
        """Keep the project's checkpoints under `[checkpoints] max_mb` (never the last
        turn of this thread)."""
        from invincat_server.runtime.checkpoints.pruning import enforce_cap

        assert self.root is not None
        store = ObjectStore(self.settings.home, self.root)
        try:
            await asyncio.to_thread(
                enforce_cap, store, self.settings.checkpoints_max_bytes, thread_id
            )
        except Exception:  # storage housekeeping must never fail a turn
            log.exception("pruning the checkpoints of %s failed", self.root)

    async def _compact_thread(self, thread_id: str) -> None:
        """Keep the thread store small: drop the checkpoints this turn superseded (see
        runtime/records.py for why only the latest is needed) and free their pages."""
        records = self.stack.records

        async def compact() -> None:
            try:
                await records.prune_checkpoints(thread_id)
                await records.reclaim_space()
            except Exception:  # storage housekeeping must never fail a turn
                log.exception("pruning checkpoints of %s failed", thread_id)

        if self.closing:
            return
        # Shielded: Ctrl-C stops waiting for follow-up work, but a DELETE cut between its
        # statement and its COMMIT would hold the database's write lock.
        task = asyncio.ensure_future(compact())
        self._housekeeping.add(task)
        task.add_done_callback(self._housekeeping.discard)
        await asyncio.shield(task)
