"""The Session API: the one entry point front ends use.

A Session is bound to one workspace. It owns the checkpointer (SQLite under
`$INVINCAT_HOME`), the agent graph, the approval policy, and the live turns. Front ends
call `start_turn`, `resolve`, `cancel`, `threads`, `history`, `pending_approvals`,
`reopen_pending`, and render the events turns emit; they never reach into agents or
stores.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.approvals import (
    ApprovalPolicy,
    Decision,
    DecisionError,
    WorkspaceRuleStore,
)
from invincat_server.runtime.config import Settings
from invincat_server.runtime.data_dir import ensure_data_dir
from invincat_server.runtime.errors import (
    SessionError,
    ThreadBusyError,
    UnknownThreadError,
    describe_error,
)
from invincat_server.runtime.events import (
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Event,
)
from invincat_server.runtime.events import Error as ErrorEvent
from invincat_server.runtime.extensions import ExtensionContext, load_extensions
from invincat_server.runtime.policy.settings_watch import SettingsWatch
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.records import ApprovalRecord, Records, ThreadInfo, prepare_file
from invincat_server.runtime.tools.documents import DiskOnly, DocumentSource
from invincat_server.runtime.turn import Turn, TurnStatus

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from invincat_server.runtime.extensions.skills import SkillScan

log = logging.getLogger("invincat.session")

EventListener = Callable[[Turn, Event], None]


class ResolveResult:
    """Outcome of `Session.resolve`: whether this decision won, and a resumed turn if any."""

    def __init__(self, resolved: bool, reason: str | None = None, turn: Turn | None = None):
        self.resolved = resolved
        self.reason = reason
        self.turn = turn

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"resolved": self.resolved}
        if self.reason:
            out["reason"] = self.reason
        if self.turn is not None:
            out["threadId"] = self.turn.thread_id
            out["turnId"] = self.turn.turn_id
        return out


class Session:
    """Threads, turns, approvals and cancellation for one workspace."""

    def __init__(
        self,
        settings: Settings,
        workspace: Workspace,
        *,
        auto_approve: bool = False,
        documents: DocumentSource | None = None,
        model: BaseChatModel | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.workspace = workspace
        self.documents = documents or DiskOnly()
        self.policy = ApprovalPolicy(
            workspace.root, WorkspaceRuleStore(settings.approvals_file), auto_approve=auto_approve
        )
        self._model = model
        self.options = options or {}
        self._extensions: Any = None
        self._notices: list[str] = []
        self._graph: Any = None
        self._context: Any = None
        self._planner: Any = None
        self._conn: Any = None
        self._records: Records | None = None
        self._turns: dict[str, Turn] = {}
        self._busy_threads: dict[str, Turn] = {}
        self._waiting: dict[str, tuple[Turn, asyncio.Future[dict[str, Any]]]] = {}
        self._listeners: list[EventListener] = []
        self._closing = False

    # lifecycle ---------------------------------------------------------------
    async def open(self) -> Session:
        """Load the agent stack and open the stores. Raises ConfigError if the model is
        not configured (the message names what to set)."""
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        from invincat_server.runtime.agents.approval_middleware import ApprovalMiddleware
        from invincat_server.runtime.agents.interaction import InteractionMiddleware
        from invincat_server.runtime.agents.main_agent import build_main_agent, system_prompt
        from invincat_server.runtime.agents.memory_guard import MemoryGuardMiddleware
        from invincat_server.runtime.agents.memory_injection import MemoryInjectionMiddleware
        from invincat_server.runtime.agents.planner import (
            PlannerApprovalMiddleware,
            build_planner_agent,
        )
        from invincat_server.runtime.context.middleware import ContextMiddleware, ContextSettings
        from invincat_server.runtime.models import build_chat_model
        from invincat_server.runtime.tools import build_core_tools
        from invincat_server.runtime.tools.memory_search import build_search_memory_tool

        model = self._model or build_chat_model(self.settings)
        ensure_data_dir(self.settings.home)  # threads.sqlite: keep it out of a dotfiles repo
        self._conn = await aiosqlite.connect(self.settings.threads_db, timeout=30)
        await prepare_file(self._conn)  # before the saver creates the first table
        # WAL lets a second process (another editor window, the CLI) read and resolve
        # approvals while this one holds the database open.
        await self._conn.execute("PRAGMA journal_mode=WAL")
        await self._conn.execute("PRAGMA busy_timeout=30000")
        saver = AsyncSqliteSaver(self._conn)
        await saver.setup()
        self._records = await Records.open(self.settings.threads_db)
        self._open_memory(
            model_factory=lambda: build_chat_model(self.settings, model=self.settings.memory_model)
        )
        tools = [
            *build_core_tools(self.workspace, documents=self.documents),
            build_search_memory_tool(self.memory),
        ]
        self._extensions = await load_extensions(
            ExtensionContext(
                settings=self.settings,
                workspace=self.workspace,
                policy=self.policy,
                model=model,
                core_tools=list(tools),
                documents=self.documents,
                notify=self.notify,
                tool_guards=[MemoryGuardMiddleware(self.memory, self._settings_watch)],
                options=dict(self.options),
            )
        )
        prompt = system_prompt(str(self.workspace.root), self._extensions.prompt_sections)
        approvals = ApprovalMiddleware(self.policy, self.workspace, self.documents)
        self._context = ContextMiddleware(
            model,
            ContextSettings(
                window=self.settings.context_window,
                threshold=self.settings.compaction_threshold,
                micro=self.settings.micro_compaction,
                auto=self.settings.auto_compaction,
            ),
            prompt,
        )
        self._graph = build_main_agent(
            model=model,
            tools=[*tools, *self._extensions.tools],
            approvals=approvals,
            prompt=prompt,
            context=self._context,
            checkpointer=saver,
            workspace_root=str(self.workspace.root),
            extra_middleware=[
                InteractionMiddleware(headless=self.policy.auto_approve, agent="main"),
                MemoryInjectionMiddleware(self.memory.render_injection),
                MemoryGuardMiddleware(self.memory, self._settings_watch),
                *self._extensions.middleware,
            ],
        )
        self._planner = build_planner_agent(
            model=model,
            tools=[*tools, *self._extensions.tools],
            checkpointer=saver,
            workspace_root=str(self.workspace.root),
            headless=self.policy.auto_approve,
            # web_fetch is on the planner's allow-list and must be approved like anywhere else.
            approvals=PlannerApprovalMiddleware(self.policy, self.workspace, self.documents),
            guard=MemoryGuardMiddleware(self.memory, self._settings_watch),
        )
        return self

    def _open_memory(self, model_factory: Callable[[], Any]) -> None:
        from invincat_server.runtime.memory.redaction import redact_text
        from invincat_server.runtime.memory.service import MemoryService
        from invincat_server.runtime.memory_agent.config import load_memory_agent_config
        from invincat_server.runtime.memory_agent.runner import MemoryAgent
        from invincat_server.runtime.records import MemoryCursors

        self.memory = MemoryService(self.settings.home, self.workspace.root, notify=self.notify)
        self._settings_watch = SettingsWatch(self.settings.home)
        guard = self.memory.guard

        def deny(path: Path, write: bool) -> str | None:
            kind = guard.protection(path, write=write)
            where = self.workspace.relative(path)
            if kind == "memory":
                return (
                    f"{where} is protected memory data (a store, journal, lock or backup, or "
                    "their folder). Tools cannot read or change it; memory changes go through "
                    "governance (`invincat memory ...`)."
                )
            if kind == "home":
                return (
                    f"{where} is in Invincat's home directory ({self.settings.home}): approval "
                    "rules, project trust, MCP and other settings, skills, threads. Tools can "
                    "never change it, and read only its skills/ and offload/ folders; the user "
                    "changes these files."
                )
            return None

        self.workspace.deny = deny
        self._memory_agent = MemoryAgent(
            service=self.memory,
            cursors=MemoryCursors(self._require_records()),
            model_factory=model_factory,
            redact=redact_text,
            config=load_memory_agent_config(self.settings.home, self.workspace.root),
        )

    async def _after_turn(self, turn: Turn) -> None:
        """Background work after a completed turn (never delays its `turn_end`): memory
        cleanup, re-anchoring of moved citations, then extraction by the memory agent when
        the turn is worth it."""
        state = await self._graph.aget_state(self._config(turn.thread_id))
        messages = state.values.get("messages", [])
        await asyncio.to_thread(self.memory.cleanup)
        await asyncio.to_thread(self.memory.reanchor)
        if self._memory_agent.should_run(turn.thread_id, messages):
            await self._memory_agent.run(turn.thread_id, messages, turn.emit)

    async def close(self, *, followup_timeout: float = 60.0) -> None:
        """Stop running turns. Approvals they wait for stay pending in the checkpoint, so a
        later process (or a restarted server) can still resolve them. Background memory
        work of finished turns gets `followup_timeout` seconds to complete."""
        followups = [t for turn in self._turns.values() for t in turn.followups if not t.done()]
        if followups:
            _, late = await asyncio.wait(followups, timeout=followup_timeout)
            for task in late:
                task.cancel()
        self._closing = True
        for turn in list(self._turns.values()):
            if turn.task is not None and not turn.task.done():
                turn.task.cancel()
                try:
                    await turn.task
                except asyncio.CancelledError:
                    pass
        if self._extensions is not None:
            await self._extensions.aclose()
        if self._records is not None:
            await self._records.close()
        if self._conn is not None:
            await self._conn.close()

    async def __aenter__(self) -> Session:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def notify(self, message: str) -> None:
        """Tell the user about a problem outside any tool call (an extension failed): an
        `error` event in every running turn, or at the start of the next turn."""
        running = [t for t in self._turns.values() if not t.done]
        if not running:
            self._notices.append(message)
        for turn in running:
            turn.emit(ErrorEvent(message=message))

    def _take_notices(self, turn: Turn) -> None:
        notices, self._notices = self._notices, []
        for message in notices:
            turn.emit(ErrorEvent(message=message))

    def add_listener(self, listener: EventListener) -> None:
        """Receive every event of every turn (the language server forwards them)."""
        self._listeners.append(listener)

    # public API --------------------------------------------------------------
    async def start_turn(
        self, prompt: str, thread_id: str | None = None, mode: str = "agent"
    ) -> Turn:
        """Start a turn and return at once; iterate `turn.events()` to follow it."""
        from langchain_core.messages import HumanMessage

        if mode not in ("agent", "plan"):
            raise SessionError(f"Unknown mode {mode!r}; use 'agent' or 'plan'.")
        if not prompt.strip():
            raise SessionError("The prompt is empty; type what you want done.")
        records = self._require_records()
        if thread_id is None:
            thread_id = "t_" + uuid.uuid4().hex[:12]
        elif await records.thread(thread_id) is None:
            raise UnknownThreadError(
                f"Unknown thread {thread_id!r}; list threads with `invincat threads list` "
                "or omit the thread id to start a new one."
            )
        self._ensure_idle(thread_id)
        from invincat_server.runtime.memory.redaction import redact_text

        # The title is stored and listed: the first prompt's secrets stay out of it.
        title = redact_text(" ".join(prompt.split()))[:80]
        await records.touch_thread(thread_id, title, str(self.workspace.root))
        # A new prompt abandons approvals still pending on this thread.
        await records.close_pending(thread_id, "superseded")
        if mode == "plan":
            from invincat_server.runtime.plan_flow import plan_turn

            return self._launch(thread_id, lambda turn: plan_turn(turn, prompt))
        graph_input = {"messages": [HumanMessage(content=prompt)]}
        return self._launch(thread_id, lambda turn: self._agent_body(turn, graph_input))

    async def create_thread(self, thread_id: str, title: str) -> None:
        """Record a thread under an id the front end chose (ACP names a session before its
        first prompt); `start_turn(prompt, thread_id)` then continues it."""
        await self._require_records().touch_thread(
            thread_id, " ".join(title.split())[:80], str(self.workspace.root)
        )

    async def resolve(self, approval_id: str, decision: dict[str, Any] | Decision) -> ResolveResult:
        """Apply a decision. The first decision for an approval wins; later ones get
        `resolved=False` with a reason. After a restart, the decision resumes the turn
        (returned as `result.turn`) once every approval of its batch is decided."""
        records = self._require_records()
        try:
            parsed = decision if isinstance(decision, Decision) else Decision.parse(decision)
        except DecisionError as exc:
            return ResolveResult(False, str(exc))
        record = await records.approval(approval_id)
        if record is None:
            return ResolveResult(False, f"Unknown approval {approval_id!r}.")
        if record.status != "pending":
            return ResolveResult(False, f"Approval {approval_id} was already {record.status}.")
        error = self._validate_decision(record, parsed)
        if error:
            return ResolveResult(False, error)
        payload = parsed.model_dump(exclude_none=True)
        if not await records.claim(approval_id, payload):
            return ResolveResult(False, f"Approval {approval_id} was already resolved elsewhere.")
        remembered = self._remembered_label(record, parsed)
        live = self._waiting.pop(approval_id, None)
        if live is not None:
            turn, future = live
            turn.emit(
                ApprovalResolved(
                    approval_id=approval_id, decision=parsed.describe(), remembered=remembered
                )
            )
            if not future.done():
                future.set_result(payload)
            return ResolveResult(True)
        # No live turn waits (the process that asked was restarted): resume the thread once
        # the whole batch is decided.
        batch = await records.batch(record.batch_id)
        if any(r.status == "pending" for r in batch):
            return ResolveResult(True)
        if any(r.status != "resolved" for r in batch):
            return ResolveResult(True, "The turn that asked was cancelled; nothing to resume.")
        self._ensure_idle(record.thread_id)
        turn = await self._launch_resume(
            record.thread_id,
            str(record.request.get("agent") or "main"),
            record.batch_id,
            {r.request["tool_call_id"]: r.decision for r in batch},
            ApprovalResolved(
                approval_id=approval_id, decision=parsed.describe(), remembered=remembered
            ),
        )
        return ResolveResult(True, turn=turn)

    async def reopen_pending(self, thread_id: str) -> Turn | None:
        """Continue the turn an earlier process left waiting for approvals on `thread_id`,
        for a front end that asks in line (the terminal): the new turn announces them again
        (`approval_requested`, after `turn_start`) and goes on once each is decided through
        `resolve`, exactly like a live turn. None when nothing is pending there."""
        records = self._require_records()
        self._ensure_idle(thread_id)
        await self._sync_interrupts(thread_id)
        pending = await records.pending(thread_id)
        if not pending:
            return None
        agent = str(pending[0].request.get("agent") or "main")
        batches = {r.batch_id for r in pending}
        graph = self._planner if agent == "planner" else self._graph
        config = self._config(thread_id, agent=agent)

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

        return self._launch(thread_id, self._resumed_body(agent, resume))

    def skills(self) -> SkillScan:
        """The skills on disk now (names, descriptions, where from, and the SKILL.md files
        skipped with why). The model's list is the one read when the session opened."""
        from invincat_server.runtime.extensions.skills import discover_skills

        return discover_skills(self.settings.home, self.workspace.root)

    async def offload(self, thread_id: str) -> dict[str, Any]:
        """Move all but the latest turn out of the model's context into
        `.invincat/offload/<thread>.md`; returns a compaction report."""
        from invincat_server.runtime.context.offload import append_offload, offload_path
        from invincat_server.runtime.memory.redaction import redact_text

        records = self._require_records()
        if await records.thread(thread_id) is None:
            raise UnknownThreadError(f"Unknown thread {thread_id!r}.")
        self._ensure_idle(thread_id)
        if await records.pending(thread_id):
            raise SessionError(
                f"Thread {thread_id} has a pending approval; resolve it before offloading."
            )
        config = self._config(thread_id)
        state = await self._graph.aget_state(config)
        messages = state.values.get("messages", [])
        compaction = state.values.get("compaction")
        path = offload_path(self.workspace.root, thread_id)
        shown = self.workspace.relative(path)
        record = await self._context.compact(
            messages,
            compaction,
            reason="offload",
            keep_tokens=0,
            summarize=False,
            note=f"The full earlier conversation is in {shown}; read it if you need details.",
        )
        if record is None:
            tokens = self._context.estimate(messages)
            return {
                "threadId": thread_id,
                "offloadedMessages": 0,
                "file": None,
                "tokensBefore": tokens,
                "tokensAfter": tokens,
            }
        ids = [m.id for m in messages]
        start = (
            ids.index(compaction["cut_id"]) if compaction and compaction.get("cut_id") in ids else 0
        )
        moved = messages[start : record["messages_cut"]]
        append_offload(path, moved, thread_id=thread_id, redact=redact_text)
        await self._graph.aupdate_state(config, {"compaction": record})
        return {
            "threadId": thread_id,
            "offloadedMessages": len(moved),
            "file": str(path),
            "tokensBefore": record["tokens_before"],
            "tokensAfter": record["tokens_after"],
        }

    def cancel(self, turn_id: str) -> bool:
        """Cancel a running turn (a running shell command is killed). False if not running."""
        turn = self._turns.get(turn_id)
        if turn is None or turn.task is None or turn.task.done():
            return False
        turn.task.cancel()
        return True

    def turn(self, turn_id: str) -> Turn | None:
        return self._turns.get(turn_id)

    async def threads(self, *, all_workspaces: bool = True) -> list[ThreadInfo]:
        workspace = None if all_workspaces else str(self.workspace.root)
        return await self._require_records().threads(workspace)

    async def history(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's messages as plain dicts (role, content, tool calls/results)."""
        from invincat_server.runtime.history import messages_to_dicts

        if await self._require_records().thread(thread_id) is None:
            raise UnknownThreadError(f"Unknown thread {thread_id!r}.")
        state = await self._graph.aget_state(self._config(thread_id))
        return messages_to_dicts(state.values.get("messages", []))

    async def delete_thread(self, thread_id: str, *, discard_pending: bool = False) -> None:
        """Delete a saved thread and everything stored for it. A running thread is refused;
        so is one with approvals waiting for a decision, unless `discard_pending`."""
        records = self._require_records()
        if await records.thread(thread_id) is None:
            raise UnknownThreadError(
                f"Unknown thread {thread_id!r}; list threads with `invincat threads list`."
            )
        self._ensure_idle(thread_id)
        await self._sync_interrupts(thread_id)
        waiting = await records.pending(thread_id)
        if waiting and not discard_pending:
            raise SessionError(
                f"Thread {thread_id} has {len(waiting)} approval(s) waiting for a decision; "
                "deleting it discards them. Ask the user, then repeat with discardPending."
            )
        await records.delete_thread(thread_id)
        await records.reclaim_space()

    async def prune_threads(
        self, older_than_days: float, *, discard_pending: bool = False, dry_run: bool = False
    ) -> tuple[list[ThreadInfo], list[tuple[ThreadInfo, str]]]:
        """Delete threads last used more than `older_than_days` days ago. Returns (deleted,
        kept with why): running threads, and threads with pending approvals unless
        `discard_pending`, are kept. `dry_run` only reports what would go."""
        from datetime import UTC, datetime, timedelta

        if not 0 <= older_than_days <= 100_000:  # also refuses NaN and infinity
            raise SessionError("olderThanDays must be a number of days from 0 to 100000.")
        records = self._require_records()
        cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
        deleted: list[ThreadInfo] = []
        kept: list[tuple[ThreadInfo, str]] = []
        for info in await records.threads_older_than(cutoff):
            running = self._busy_threads.get(info.thread_id)
            if running is not None and not running.done:
                kept.append((info, "a turn is running"))
                continue
            await self._sync_interrupts(info.thread_id)
            waiting = await records.pending(info.thread_id)
            if waiting and not discard_pending:
                kept.append((info, f"{len(waiting)} approval(s) waiting for a decision"))
                continue
            if not dry_run:
                await records.delete_thread(info.thread_id)
            deleted.append(info)
        if deleted and not dry_run:
            await records.reclaim_space()
        return deleted, kept

    async def pending_approvals(self, thread_id: str | None = None) -> list[ApprovalRequested]:
        """Approvals waiting for a decision, including those that survived a restart."""
        records = self._require_records()
        threads = [thread_id] if thread_id else [t.thread_id for t in await records.threads()]
        for tid in threads:
            await self._sync_interrupts(tid)
        return [
            ApprovalRequested.model_validate(r.request) for r in await records.pending(thread_id)
        ]

    # turn plumbing (used by Turn) ------------------------------------------------
    def _launch(self, thread_id: str, body: Callable[[Turn], Awaitable[TurnStatus]]) -> Turn:
        turn = Turn(self, thread_id, "turn_" + uuid.uuid4().hex[:12])
        self._turns[turn.turn_id] = turn
        self._busy_threads[thread_id] = turn
        turn.task = asyncio.create_task(turn.run(body), name=f"invincat-{turn.turn_id}")
        return turn

    async def _agent_body(self, turn: Turn, graph_input: Any) -> TurnStatus:
        await turn.drive(self._graph, graph_input, self._config(turn.thread_id))
        return "completed"

    async def _launch_resume(
        self,
        thread_id: str,
        agent: str,
        batch_id: str,
        decisions: dict[str, Any],
        resolved: ApprovalResolved,
    ) -> Turn:
        """Resume a checkpointed interrupt (the process that asked is gone) with the
        decisions taken; `resolved` is the decision that completed the batch, reported
        right after `turn_start`."""
        from langgraph.types import Command

        graph = self._planner if agent == "planner" else self._graph
        config = self._config(thread_id, agent=agent)
        state = await graph.aget_state(config)
        ids = [
            item.id
            for item in state.interrupts
            if isinstance(item.value, dict) and item.value.get("batch_id") == batch_id
        ]
        value = {"decisions": decisions}
        command = Command(resume={ids[0]: value}) if ids else Command(resume=value)

        async def resume(turn: Turn) -> None:
            turn.emit(resolved)
            await turn.drive(graph, command, config)

        return self._launch(thread_id, self._resumed_body(agent, resume))

    def _resumed_body(
        self, agent: str, resume: Callable[[Turn], Awaitable[None]]
    ) -> Callable[[Turn], Awaitable[TurnStatus]]:
        """A resumed turn's body: `resume` the paused agent, then, for a plan, execute it."""

        async def body(turn: Turn) -> TurnStatus:
            await resume(turn)
            if agent == "planner":
                from invincat_server.runtime.plan_flow import after_planner

                return await after_planner(turn)
            return "completed"

        return body

    def _ensure_idle(self, thread_id: str) -> None:
        running = self._busy_threads.get(thread_id)
        if running is not None and not running.done:
            raise ThreadBusyError(
                f"Thread {thread_id} is already running turn {running.turn_id}; "
                "wait for it or cancel it first."
            )

    def _turn_ended(self, turn: Turn) -> None:
        """Called right after `turn_end` was emitted."""
        if turn.status == "completed" and self._graph is not None:
            turn.add_followup(asyncio.create_task(self._after_turn(turn)))
        if self._records is not None:
            turn.add_followup(asyncio.create_task(self._compact_thread(turn.thread_id)))

    async def _compact_thread(self, thread_id: str) -> None:
        """Keep threads.sqlite small: drop the checkpoints this turn superseded (see
        runtime/records.py for why only the latest is needed) and free their pages."""
        records = self._require_records()

        async def compact() -> None:
            try:
                await records.prune_checkpoints(thread_id)
                await records.reclaim_space()
            except Exception:  # storage housekeeping must never fail a turn
                log.exception("pruning checkpoints of %s failed", thread_id)

        # Shielded: Ctrl-C stops waiting for follow-up work, but a DELETE cut between its
        # statement and its COMMIT would hold the database's write lock.
        await asyncio.shield(asyncio.ensure_future(compact()))

    def _turn_finished(self, turn: Turn) -> None:
        if self._busy_threads.get(turn.thread_id) is turn:
            del self._busy_threads[turn.thread_id]
        for approval_id, (owner, future) in list(self._waiting.items()):
            if owner is turn:
                del self._waiting[approval_id]
                future.cancel()

    async def _on_turn_cancelled(self, turn: Turn) -> None:
        if self._closing:
            return
        await self._require_records().close_pending(turn.thread_id, "cancelled")

    def _dispatch(self, turn: Turn, event: Event) -> None:
        for listener in self._listeners:
            try:
                listener(turn, event)
            except Exception:
                log.exception("event listener failed")

    def _describe(self, exc: BaseException) -> str:
        return describe_error(exc, self.settings)

    def _log_exception(self, exc: BaseException) -> None:
        log.debug("turn failed", exc_info=exc)

    def _config(self, thread_id: str, agent: str = "main") -> dict[str, Any]:
        # The planner keeps its own checkpoint under a derived key; tools read the user's
        # thread id from `invincat_thread`.
        key = thread_id if agent == "main" else f"{thread_id}/{agent}"
        return {
            "configurable": {"thread_id": key, "invincat_thread": thread_id},
            "recursion_limit": 200,
        }

    def _context_usage(self, thread_id: str, message: Any) -> ContextUsage:
        usage = getattr(message, "usage_metadata", None) or {}
        tokens = int(usage.get("total_tokens") or 0)
        if not tokens:
            from langchain_core.messages.utils import count_tokens_approximately

            tokens = count_tokens_approximately([message])
        return ContextUsage(tokens=tokens, limit=self.settings.context_window)

    async def _register_approval(
        self, request: ApprovalRequested, batch_id: str
    ) -> ApprovalRecord | None:
        records = self._require_records()
        await records.add_approval(
            request.approval_id, request.thread_id, batch_id, request.to_json_dict()
        )
        return await records.approval(request.approval_id)

    def _await_decision(
        self, turn: Turn, request: ApprovalRequested
    ) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request.approval_id] = (turn, future)
        return future

    async def _sync_interrupts(self, thread_id: str) -> None:
        """Re-register interrupts found in the checkpoint (e.g. written just before a crash)."""
        if self._busy_threads.get(thread_id) is not None:
            return
        items: list[Any] = []
        for agent, graph in (("main", self._graph), ("planner", self._planner)):
            state = await graph.aget_state(self._config(thread_id, agent=agent))
            items += list(getattr(state, "interrupts", ()) or ())
        for item in items:
            value = item.value if isinstance(item.value, dict) else {}
            for request in value.get("requests", []):
                parsed = ApprovalRequested.model_validate(request)
                await self._require_records().add_approval(
                    parsed.approval_id, thread_id, str(value.get("batch_id")), parsed.to_json_dict()
                )

    def _validate_decision(self, record: ApprovalRecord, decision: Decision) -> str | None:
        mismatch = decision.allowed_for(str(record.request.get("kind") or "tool"))
        if mismatch:
            return mismatch
        if decision.type == "edit":
            tool = record.request.get("tool_name")
            if not isinstance(decision.edited_args, dict):
                return "edit needs edited_args as an object."
            if tool in {"write_file", "edit_file"} and "path" not in decision.edited_args:
                return f"edited_args for {tool} must include path."
        return None

    def _remembered_label(self, record: ApprovalRecord, decision: Decision) -> str | None:
        if decision.type != "approve_always":
            return None
        for option in record.request.get("always_options", []):
            if option.get("scope") == decision.scope:
                return str(option.get("label"))
        return None

    def _require_records(self) -> Records:
        if self._records is None:
            raise SessionError("Session is not open; call `await session.open()` first.")
        return self._records
