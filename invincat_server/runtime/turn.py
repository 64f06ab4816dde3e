"""One turn: an asyncio task that streams the agent graph and emits typed events.

The turn translates LangGraph stream chunks into events, stops at approval interrupts to
wait for decisions (which arrive through `Session.resolve`; its host is the
`TurnRunner`, runtime/turn_runner.py), and always ends with exactly
one `turn_end` event, whatever happened.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from invincat_server.runtime.events import (
    ApprovalRequested,
    Error,
    Event,
    MessageDelta,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnStart,
    parse_event,
)
from invincat_server.runtime.tool_outcome import tool_status

if TYPE_CHECKING:
    from invincat_server.runtime.turn_runner import TurnRunner

TurnStatus = Literal["completed", "cancelled", "failed"]


class Turn:
    """Handle to a running turn: its id, its events, and its outcome."""

    def __init__(self, host: TurnRunner, thread_id: str, turn_id: str) -> None:
        self.host = host
        self.thread_id = thread_id
        self.turn_id = turn_id
        self.status: TurnStatus | None = None
        self.task: asyncio.Task[None] | None = None
        self._events: list[Event] = []
        self._wake = asyncio.Event()
        self._finished = False
        self._emitted_calls: set[str] = set()
        self.followups: list[asyncio.Task[None]] = []

    # event stream ------------------------------------------------------------
    def emit(self, event: Event) -> None:
        self._events.append(event)
        self.host.dispatch(self, event)
        wake, self._wake = self._wake, asyncio.Event()
        wake.set()

    def add_followup(self, task: asyncio.Task[None]) -> None:
        """Background work started after `turn_end` (memory) whose events follow it."""
        self.followups.append(task)
        task.add_done_callback(lambda _: self._wake.set())

    async def events(self, *, follow: bool = False) -> AsyncIterator[Event]:
        """Every event of the turn from the start, then live ones until `turn_end` — or,
        with `follow`, until the background work after it (memory) is done too."""
        index = 0
        while True:
            while index < len(self._events):
                yield self._events[index]
                index += 1
            if self._finished and not (follow and any(not t.done() for t in self.followups)):
                if index >= len(self._events):
                    return
                continue
            wake = self._wake
            await wake.wait()
            if wake is self._wake:
                self._wake = asyncio.Event()

    @property
    def done(self) -> bool:
        return self._finished

    async def wait(self) -> TurnStatus:
        if self.task is not None:
            await asyncio.shield(self.task)
        assert self.status is not None
        return self.status

    # running -----------------------------------------------------------------
    async def run(self, body: Callable[[Turn], Awaitable[TurnStatus]]) -> None:
        """Run `body` (which drives one or more graphs) and always end with `turn_end`."""
        self.emit(TurnStart(thread_id=self.thread_id, turn_id=self.turn_id))
        self.host.take_notices(self)
        status: TurnStatus = "failed"
        try:
            status = await body(self)
        except asyncio.CancelledError:
            status = "cancelled"
            await self.host.turn_cancelled(self)
        except Exception as exc:  # a turn must end with an event, never a traceback
            self.emit(Error(message=self.host.describe_failure(exc)))
        finally:
            self.status = status
            self.host.turn_finished(self)
            self.emit(TurnEnd(status=status, thread_id=self.thread_id, turn_id=self.turn_id))
            self._finished = True
            self._wake.set()
            self.host.turn_ended(self)

    async def drive(self, graph: Any, graph_input: Any, config: dict[str, Any]) -> None:
        """Stream `graph` until it finishes, pausing at interrupts for decisions."""
        current = graph_input
        while True:
            interrupts = await self._stream(graph, current, config)
            if not interrupts:
                return
            current = await self._decide(interrupts)

    async def drive_pending(
        self, graph: Any, interrupts: list[tuple[str, dict[str, Any]]], config: dict[str, Any]
    ) -> None:
        """Continue a graph an earlier process left stopped at `interrupts`: announce them
        again in this turn (after `turn_start`), wait for the decisions, then drive on."""
        await self.drive(graph, await self._decide(interrupts), config)

    async def _decide(self, interrupts: list[tuple[str, dict[str, Any]]]) -> Any:
        """Wait for every decision of `interrupts`; the command that resumes the graph."""
        from langgraph.types import Command

        resumes: dict[str, Any] = {}
        for interrupt_id, value in interrupts:
            resumes[interrupt_id] = {"decisions": await self._collect_decisions(value)}
        if len(resumes) == 1:
            return Command(resume=next(iter(resumes.values())))
        return Command(resume=resumes)

    async def _stream(
        self, graph: Any, graph_input: Any, config: dict[str, Any]
    ) -> list[tuple[str, dict[str, Any]]]:
        """Run the graph until it ends ([]) or interrupts ([(interrupt id, value)])."""
        from langchain_core.messages import AIMessageChunk

        interrupts: list[tuple[str, dict[str, Any]]] = []
        async for namespace, mode, chunk in graph.astream(
            graph_input, config, stream_mode=["messages", "updates", "custom"], subgraphs=True
        ):
            # A non-empty namespace is a subagent running inside a `task` tool call: its
            # events carry their nesting depth, its interrupts also arrive at the top level
            # (collected there, once) and its tokens are not the answer.
            depth = len(namespace)
            if mode == "custom":
                # Middleware and tools report events (todos, compaction, ...) this way.
                if isinstance(chunk, dict) and "type" in chunk:
                    self.emit(parse_event(chunk))
            elif mode == "messages":
                message, meta = chunk
                if (
                    depth == 0
                    and meta.get("langgraph_node") == "model"
                    and isinstance(message, AIMessageChunk)
                    and message.text
                ):
                    self.emit(MessageDelta(text=message.text))
            else:
                interrupts += self._on_updates(chunk, depth)
        return interrupts

    def _on_updates(self, chunk: dict[str, Any], depth: int) -> list[tuple[str, dict[str, Any]]]:
        """The one place `tool_call` and `tool_result` events come from, whichever agent
        (main, planner, subagent at `depth`) and whichever node (model, tools, a
        middleware that answered a call itself) produced the messages."""
        from langchain_core.messages import AIMessage, ToolMessage

        interrupts: list[tuple[str, dict[str, Any]]] = []
        for node, update in chunk.items():
            if node == "__interrupt__":
                if depth == 0:
                    interrupts += [(item.id, dict(item.value)) for item in update]
                continue
            if not isinstance(update, dict):
                continue
            for message in update.get("messages") or []:
                if isinstance(message, AIMessage):
                    self._emit_calls(message, depth)
                    if depth == 0 and node == "model":
                        self.emit(self.host.context_usage(self.thread_id, message))
                elif isinstance(message, ToolMessage):
                    self._emit_result(message, depth)
        return interrupts

    def _emit_calls(self, message: Any, depth: int) -> None:
        for call in message.tool_calls:
            if call["id"] not in self._emitted_calls:
                self._emitted_calls.add(call["id"])
                self.emit(
                    ToolCall(id=call["id"], name=call["name"], args=call["args"], depth=depth)
                )

    def _emit_result(self, message: Any, depth: int) -> None:
        # The status is what the message says: a call declined by a person or a guard
        # was marked so by the code that declined it (runtime/tool_outcome.py).
        content = message.content if isinstance(message.content, str) else message.text
        self.emit(
            ToolResult(
                id=message.tool_call_id,
                name=message.name or "",
                status=tool_status(message),
                content=content,
                depth=depth,
            )
        )

    async def _collect_decisions(self, value: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Register the interrupt's requests, emit them, and wait for every decision."""
        requests = [ApprovalRequested.model_validate(r) for r in value.get("requests", [])]
        batch_id = str(value.get("batch_id") or (requests[0].approval_id if requests else ""))
        decisions: dict[str, dict[str, Any]] = {}
        waiting: list[tuple[ApprovalRequested, asyncio.Future[dict[str, Any]]]] = []
        for request in requests:
            known = await self.host.approvals.register(request, batch_id)
            if known is not None and known.decision is not None:
                decisions[request.tool_call_id or ""] = known.decision
                continue
            future = self.host.approvals.await_decision(self, request)
            waiting.append((request, future))
            self.emit(request)
        for request, future in waiting:
            decisions[request.tool_call_id or ""] = await future
        return decisions
