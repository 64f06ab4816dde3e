"""The Session API: the one entry point front ends use.

A Session is bound to one workspace. It opens the agent stack (runtime/agent_stack.py:
model, checkpointer, memory, extensions, agents), routes decisions through the approval
broker (runtime/approval_broker.py) and runs turns through its turn runner
(runtime/turn_runner.py). Front ends call `start_turn`, `resolve`, `cancel`, `threads`,
`history`, `pending_approvals`, `is_pending`, `reopen_pending`, and render the events
turns emit; they never reach into agents or stores.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from invincat_server.runtime.agent_stack import AgentStack, open_agent_stack
from invincat_server.runtime.approval_broker import ApprovalBroker, ResolveResult, Resume
from invincat_server.runtime.approvals import ApprovalPolicy, WorkspaceRuleStore
from invincat_server.runtime.config import Settings
from invincat_server.runtime.editor_context import (
    CONTEXT_KEY,
    PROMPT_KEY,
    EditorContext,
    build_context_block,
    find_mentions,
    find_named_files,
    left_out_notice,
)
from invincat_server.runtime.errors import SessionError, UnknownThreadError
from invincat_server.runtime.events import ApprovalRequested, Error
from invincat_server.runtime.policy.decisions import Decision
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.project.limits import prompt_problem
from invincat_server.runtime.records import ThreadInfo
from invincat_server.runtime.thread_store import ThreadRecords
from invincat_server.runtime.tools.documents import (
    DiskOnly,
    DocumentSource,
    FileContentError,
    load_text,
)
from invincat_server.runtime.tools.turn_documents import TurnDocuments
from invincat_server.runtime.turn import Turn, TurnStatus
from invincat_server.runtime.turn_runner import EventListener, TurnRunner

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from invincat_server.runtime.checkpoints.rewind import Rewinder
    from invincat_server.runtime.extensions.skills import SkillScan
    from invincat_server.runtime.memory.service import MemoryService

__all__ = ["EventListener", "ResolveResult", "Session"]

MAX_ATTACH_READ_BYTES = 2_000_000
"""Context files are read before the turn starts; bigger ones are named, not read."""


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
        memory: MemoryService | None = None,
    ) -> None:
        """`memory`: the workspace's MemoryService when the front end opened one already
        (runtime/project_data.py); otherwise the session creates its own."""
        self.settings = settings
        self.workspace = workspace
        # Tools read and write through the running turn's source (`start_turn(...,
        # documents=)`), else through this one: runtime/tools/turn_documents.py.
        self.documents = TurnDocuments(documents or DiskOnly())
        self.policy = ApprovalPolicy(
            workspace.root, WorkspaceRuleStore(settings.approvals_file), auto_approve=auto_approve
        )
        self._model = model
        self.options = options or {}
        self._runner = TurnRunner(settings, workspace.root)
        self._shared_memory = memory

    # lifecycle ---------------------------------------------------------------
    async def open(self) -> Session:
        """Load the agent stack and open the stores. Raises ConfigError if the model is
        not configured (the message names what to set)."""
        stack = await open_agent_stack(
            self.settings,
            self.workspace,
            self.policy,
            self.documents,
            model=self._model,
            options=self.options,
            notify=self.notify,
            memory=self._shared_memory,
        )
        self._runner.attach(stack, ApprovalBroker(stack.records))
        return self

    async def close(self, *, followup_timeout: float = 60.0) -> None:
        """Stop running turns. Approvals they wait for stay pending in the checkpoint, so a
        later process (or a restarted server) can still resolve them. Background memory
        work of finished turns gets `followup_timeout` seconds to complete."""
        await self._runner.close(followup_timeout)
        if self.is_open:
            await self.stack.aclose()

    async def __aenter__(self) -> Session:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def is_open(self) -> bool:
        return self._runner.is_attached

    @property
    def memory(self) -> MemoryService:
        """The governed memory of this workspace (open sessions only)."""
        return self.stack.memory

    @property
    def stack(self) -> AgentStack:
        """The agent stack (models, graphs, stores) turns run on; open sessions only."""
        return self._runner.stack

    @property
    def _records(self) -> ThreadRecords:
        return self.stack.records

    def notify(self, message: str) -> None:
        """Tell the user about a problem outside any tool call (an extension failed): an
        `error` event in every running turn, or at the start of the next turn."""
        self._runner.notify(message)

    def add_listener(self, listener: EventListener) -> None:
        """Receive every event of every turn (the language server forwards them). A
        listener that raises is logged; the others still get the event."""
        self._runner.add_listener(listener)

    def remove_listener(self, listener: EventListener) -> None:
        self._runner.remove_listener(listener)

    def bind_documents(self, thread_id: str, documents: DocumentSource | None) -> None:
        """Where the turns of `thread_id` read buffers and write files from now on (new
        ones, and ones resumed after an approval or a restart); None: the Session's own
        source. ACP binds each ACP session's client to its thread."""
        self._runner.bind_documents(thread_id, documents)

    # public API --------------------------------------------------------------
    async def start_turn(
        self,
        prompt: str,
        thread_id: str | None = None,
        mode: str = "agent",
        context: EditorContext | None = None,
        documents: DocumentSource | None = None,
    ) -> Turn:
        """Start a turn and return at once; iterate `turn.events()` to follow it.

        `documents`: where this thread's turns (this one and any resumed after an
        approval) read buffers and write files; None: the Session's own source. ACP passes
        the client of the ACP session that sent the prompt, so one Session serves them all.

        `context` (what the editor shows) and the `@path` mentions in `prompt` become one
        `<editor_context>` block appended to the user message (runtime/editor_context.py).
        A file outside the workspace or protected in `context` raises ContextError; a
        mention that cannot be attached is reported in the turn (an `error` event) and to
        the model, and the turn runs."""
        from langchain_core.messages import HumanMessage

        if mode not in ("agent", "plan"):
            raise SessionError(f"Unknown mode {mode!r}; use 'agent' or 'plan'.")
        if not prompt.strip():
            raise SessionError("The prompt is empty; type what you want done.")
        if problem := prompt_problem(prompt):
            raise SessionError(problem)
        source = documents or self.documents.default
        mentions = find_mentions(prompt, self.workspace)
        if self.settings.attach_named_files:
            taken = {mention.path for mention in mentions if mention.path is not None}
            mentions += find_named_files(prompt, self.workspace, taken)
        block, labels = build_context_block(
            context, mentions, self.workspace, lambda path: self._read_current(path, source)
        )
        notices = [mention.problem for mention in mentions if mention.problem]
        notices += context.notes if context is not None else []
        if left_out := left_out_notice(labels):
            notices.append(left_out)
        records = self._records
        if thread_id is None:
            thread_id = "t_" + uuid.uuid4().hex[:12]
        elif await records.thread(thread_id) is None:
            raise UnknownThreadError(
                f"Unknown thread {thread_id!r}; list threads with `invincat threads list` "
                "or omit the thread id to start a new one."
            )
        self._runner.ensure_idle(thread_id)
        if documents is not None:
            self._runner.bind_documents(thread_id, documents)
        # The title is made (redacted, then cut) by touch_thread: runtime/titles.py.
        await records.touch_thread(thread_id, prompt, str(self.workspace.root))
        # A new prompt abandons approvals still pending on this thread.
        await records.close_pending(thread_id, "superseded")
        text = f"{prompt}\n\n{block}" if block else prompt
        if mode == "plan":
            from invincat_server.runtime.plan_flow import plan_turn

            async def plan_body(turn: Turn) -> TurnStatus:
                _tell(turn, notices)
                return await plan_turn(turn, text)

            return self._runner.launch(thread_id, plan_body)
        # History shows what the user typed, not the block: the message keeps the prompt
        # and one label per context item beside the model's text (runtime/history.py).
        extra = {PROMPT_KEY: prompt, CONTEXT_KEY: labels} if block else {}
        # The id is ours, so the turn's rewind checkpoints can name it (runtime/checkpoints).
        message_id = str(uuid.uuid4())
        message = HumanMessage(content=text, additional_kwargs=extra, id=message_id)
        graph_input = {"messages": [message]}
        graph, config = self.stack.graph, self.stack.config(thread_id)

        async def body(turn: Turn) -> TurnStatus:
            _tell(turn, notices)
            await turn.drive(graph, graph_input, config)
            return "completed"

        return self._runner.launch(thread_id, body, message_id)

    def _read_current(self, path: Path, documents: DocumentSource) -> str | None:
        """Buffer text if the editor has the file open, else the disk text (a file too big
        to attach is refused before it is read: this runs before the turn starts)."""
        shown = self.workspace.relative(path)
        buffer = documents.read_text(path)  # one read: ACP asks the client for it
        if buffer is not None:
            return buffer
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        if size > MAX_ATTACH_READ_BYTES:
            raise FileContentError(
                f"{shown} is {size / 1e6:.1f} MB, too big to attach; ask Invincat to read "
                "the part you mean"
            )
        return load_text(DiskOnly(), path, shown)

    async def create_thread(self, thread_id: str, title: str) -> None:
        """Record a thread under an id the front end chose (ACP names a session before its
        first prompt); `start_turn(prompt, thread_id)` then continues it."""
        await self._records.touch_thread(thread_id, title, str(self.workspace.root))

    async def resolve(self, approval_id: str, decision: dict[str, Any] | Decision) -> ResolveResult:
        """Apply a decision. The first decision for an approval wins; later ones get
        `resolved=False` with a reason. After a restart, the decision resumes the turn
        (returned as `result.turn`) once every approval of its batch is decided. A won
        `reject_always` leaves a session deny rule: later calls it covers are rejected
        without asking, and so are the other pending approvals of its batch it covers
        (answered here, each with its `approval_resolved`; `is_pending` tells a front end
        that one it was about to ask is answered)."""
        asked = None
        if _type_of(decision) == "reject_always":
            # Read before resolving: once the decision is handed to the turn, the front end
            # may cancel the task that called us (ACP does when the approval resolves), and
            # the rule must be in place before the turn runs on.
            record = await self._records.approval(approval_id)
            asked = ApprovalRequested.model_validate(record.request) if record else None
        outcome = await self._runner.approvals.resolve(approval_id, decision)
        if asked is not None and (isinstance(outcome, Resume) or outcome.resolved):
            self.policy.deny(asked)  # no await between the broker's answer and this
        if isinstance(outcome, Resume):
            self._runner.ensure_idle(outcome.thread_id)
            return ResolveResult(True, turn=await self._runner.resume(outcome))
        return outcome

    async def is_pending(self, approval_id: str) -> bool:
        """Whether `approval_id` still waits for a decision. False once it is answered
        (here, by another front end or process, or by a 'reject always' of its batch) or
        closed: a front end drops its prompt instead of asking."""
        record = await self._records.approval(approval_id)
        return record is not None and record.status == "pending"

    async def reopen_pending(self, thread_id: str) -> Turn | None:
        """Continue the turn an earlier process left waiting for approvals on `thread_id`,
        for a front end that asks in line (the terminal): the new turn announces them again
        (`approval_requested`, after `turn_start`) and goes on once each is decided through
        `resolve`, exactly like a live turn. None when nothing is pending there."""
        records = self._records
        self._runner.ensure_idle(thread_id)
        await self._runner.sync_interrupts(thread_id)
        pending = await records.pending(thread_id)
        if not pending:
            return None
        agent = str(pending[0].request.get("agent") or "main")
        return self._runner.reopen(thread_id, agent, {r.batch_id for r in pending})

    def skills(self) -> SkillScan:
        """The skills on disk now (names, descriptions, where from, and the SKILL.md files
        skipped with why). The model's list is the one read when the session opened."""
        from invincat_server.runtime.extensions.skills import discover_skills

        return discover_skills(self.settings.home, self.workspace.root)

    async def offload(self, thread_id: str) -> dict[str, Any]:
        """Move all but the latest turn out of the model's context into
        `.invincat/offload/<thread>.md`; returns a compaction report."""
        from invincat_server.runtime.context.offload import offload_path, offload_thread

        records = self._records
        if await records.thread(thread_id) is None:
            raise UnknownThreadError(f"Unknown thread {thread_id!r}.")
        self._runner.ensure_idle(thread_id)
        if await records.pending(thread_id):
            raise SessionError(
                f"Thread {thread_id} has a pending approval; resolve it before offloading."
            )
        shown = self.workspace.relative(offload_path(self.workspace.root, thread_id))
        stack = self.stack
        return await offload_thread(
            stack.graph, stack.context, self.workspace.root, shown, thread_id
        )

    async def rewind_conversation(self, thread_id: str, to_turn: int) -> int:
        """Make the thread forget turn `to_turn` (1 = the first) and every later one
        (runtime/checkpoints/conversation.py); returns how many messages went. A busy
        thread, or one waiting for an approval, is refused."""
        from invincat_server.runtime.checkpoints.conversation import truncate

        await self.ensure_rewindable(thread_id)
        return await truncate(self.stack.graph, self.stack.config(thread_id), to_turn)

    async def ensure_rewindable(self, thread_id: str) -> None:
        """Refuse a rewind (files or conversation) of an unknown thread, of one whose turn
        is running here (it is still recording what it changes) or that has an approval
        waiting (ThreadBusyError, from the one check: `Rewinder.ensure_quiet`)."""
        if await self._records.thread(thread_id) is None:
            raise UnknownThreadError(f"Unknown thread {thread_id!r}.")
        await asyncio.to_thread(self.rewinder().ensure_quiet, thread_id)

    def rewinder(self) -> Rewinder:
        """The code rewinds of this session's project, which also know the turns this
        session runs: a rewind of a busy thread is refused (`Rewinder.ensure_quiet`)."""
        from invincat_server.runtime.checkpoints.rewind import Rewinder

        def running(thread_id: str) -> str | None:
            turn = self._runner.running(thread_id)
            return turn.turn_id if turn is not None else None

        return Rewinder(self.settings, self.workspace.root, running)

    def cancel(self, turn_id: str) -> bool:
        """Cancel a running turn (a running shell command is killed). False if not running."""
        turn = self._runner.turns.get(turn_id)
        if turn is None or turn.task is None or turn.task.done():
            return False
        turn.task.cancel()
        return True

    async def threads(self, *, all_workspaces: bool = True) -> list[ThreadInfo]:
        workspace = None if all_workspaces else str(self.workspace.root)
        return await self._records.threads(workspace)

    async def history(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's messages as plain dicts (role, content, tool calls/results)."""
        from invincat_server.runtime.history import messages_to_dicts

        if await self._records.thread(thread_id) is None:
            raise UnknownThreadError(f"Unknown thread {thread_id!r}.")
        state = await self.stack.graph.aget_state(self.stack.config(thread_id))
        return messages_to_dicts(state.values.get("messages", []))

    async def delete_thread(self, thread_id: str, *, discard_pending: bool = False) -> None:
        """Delete a saved thread and everything stored for it. A running thread is refused;
        so is one with approvals waiting for a decision, unless `discard_pending`."""
        from invincat_server.runtime.thread_pruning import delete_thread

        await delete_thread(self._runner, thread_id, discard_pending=discard_pending)

    async def prune_threads(
        self, older_than_days: float, *, discard_pending: bool = False, dry_run: bool = False
    ) -> tuple[list[ThreadInfo], list[tuple[ThreadInfo, str]]]:
        """Delete threads last used more than `older_than_days` days ago. Returns (deleted,
        kept with why): running threads, and threads with pending approvals unless
        `discard_pending`, are kept. `dry_run` only reports what would go."""
        from invincat_server.runtime.thread_pruning import prune_threads

        return await prune_threads(
            self._runner, older_than_days, discard_pending=discard_pending, dry_run=dry_run
        )

    def edited_request(self, request: ApprovalRequested, args: dict[str, Any]) -> ApprovalRequested:
        """What an approval's call does with the arguments a person edited (runtime/
        edited_call.py): front ends show it and ask again before it runs."""
        from invincat_server.runtime.edited_call import edited_request

        return edited_request(request, args, self.workspace, self.documents)

    async def pending_approvals(self, thread_id: str | None = None) -> list[ApprovalRequested]:
        """Approvals waiting for a decision, including those that survived a restart."""
        records = self._records
        threads = [thread_id] if thread_id else [t.thread_id for t in await records.threads()]
        for tid in threads:
            await self._runner.sync_interrupts(tid)
        return [
            ApprovalRequested.model_validate(r.request) for r in await records.pending(thread_id)
        ]


def _tell(turn: Turn, notices: list[str]) -> None:
    """Problems with the prompt's @mentions, right after `turn_start` (the model is told
    in the context block too)."""
    for message in notices:
        turn.emit(Error(message=message))


def _type_of(decision: dict[str, Any] | Decision) -> object:
    return decision.type if isinstance(decision, Decision) else decision.get("type")
