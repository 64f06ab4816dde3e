"""Running the memory agent for one thread after a completed turn.

Never raises into the caller: every failure (model error, malformed output, rejected
batch) is logged, counted in the thread's cursor record, and leaves the store and the
cursor where they were, so the next run retries the same slice knowing why.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from invincat_server.runtime.errors import ModelOutputError
from invincat_server.runtime.events import Event, MemoryChanged, MemoryIdle, MemoryUpdating
from invincat_server.runtime.memory.redaction import cut_redacted, window_for_cut
from invincat_server.runtime.memory_agent.evidence import (
    FILE_TOOLS,
    collect_evidence,
    stale_evidence,
)
from invincat_server.runtime.memory_agent.prompt import (
    CALL_ARGS_CHARS,
    CONSTRAINED_NOTE,
    SUBMIT_TOOL,
    SYSTEM_PROMPT,
    TOOL_RESULT_CHARS,
    constrained_output,
    snapshot_text,
    submit_tool_schema,
    user_message,
)
from invincat_server.runtime.memory_agent.triggers import is_acknowledgement, is_explicit_request
from invincat_server.runtime.records import MemoryCursors

log = logging.getLogger("invincat.memory_agent")

RETRIES = 1
"""How often a run asks the memory model again, quoting why its answer was not used, when
that answer is unusable or its batch is rejected: in a one-shot `invincat chat` there is no
next run to quote it to (Qwen2.5-Coder-1.5B wrote invalid JSON in 1 of 6 answers)."""


NOTHING_STORED = (
    "The user explicitly asked for something to be remembered in this conversation, and "
    "your proposal stored nothing (only noop). Propose a create for it, or an update of the "
    "entry that already holds it; answer noop again only if an entry already says exactly that."
)
"""Why a proposal of only noops is asked for again after an explicit request ("remember
…"): Qwen2.5-Coder-1.5B answered noop to "Remember this convention for this project:
Makefiles are always indented with tabs" (bench run 21)."""


def stored_nothing(reports: Sequence[Any]) -> bool:
    return not any(a.op != "noop" for r in reports for a in r.applied)


class ProposalError(Exception):
    """The memory model's output cannot be used; the message says why."""


@dataclass
class MemoryAgentConfig:
    enabled: bool = True
    min_seconds_between_runs: float = 0.0
    min_turn_interval: int = 1


def fingerprint(message: Any) -> str:
    text = message.content if isinstance(message.content, str) else json.dumps(message.content)
    raw = f"{message.id}|{type(message).__name__}|{text}"
    return hashlib.sha256(raw.encode("utf-8", "replace")).hexdigest()[:24]


def latest_user_text(messages: Sequence[Any]) -> str:
    from langchain_core.messages import HumanMessage

    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text
    return ""


def turn_is_memorable(messages: Sequence[Any]) -> bool:
    """A completed, non-trivial turn: final assistant answer, no pending tool calls, and a
    user message that is more than an acknowledgement."""
    from langchain_core.messages import AIMessage

    if not messages or not isinstance(messages[-1], AIMessage) or messages[-1].tool_calls:
        return False
    return not is_acknowledgement(latest_user_text(messages))


def conversation_text(
    messages: Sequence[Any], redact: Callable[[str], str]
) -> tuple[str, list[tuple[str, dict[str, Any], str]]]:
    """Readable slice (tool calls and results abbreviated) and the raw tool results for
    evidence. What is abbreviated is redacted first: a secret cut at 200 characters would
    leave half a token that no rule recognises when the whole slice is redacted."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from invincat_server.runtime.agents.text_tool_call_middleware import as_shown_to_models

    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    parts: list[str] = []
    results: list[tuple[str, dict[str, Any], str]] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            parts.append(f"User: {message.text}")
        elif isinstance(message, AIMessage):
            # A call the main model wrote as text is shown once, as a call.
            message = as_shown_to_models(message)
            for call in message.tool_calls:
                calls[call["id"] or ""] = (call["name"], dict(call["args"]))
            if message.text.strip():
                parts.append(f"Assistant: {message.text}")
            for call in message.tool_calls:
                shown = cut_redacted(redact(json.dumps(call["args"])), CALL_ARGS_CHARS)
                parts.append(f"Assistant called {call['name']}({shown})")
        elif isinstance(message, ToolMessage):
            name, args = calls.get(message.tool_call_id, (message.name or "", {}))
            results.append((name, args, message.text))
            window = window_for_cut(message.text, TOOL_RESULT_CHARS)
            returned = cut_redacted(redact(window), TOOL_RESULT_CHARS)
            parts.append(f"Tool {name} returned: {returned}")
    return "\n".join(parts), results


def all_dropped(reports: Sequence[Any]) -> str | None:
    """Why nothing of a proposal was applied, when every operation in it was dropped (none
    applied but noops, at least one dropped); None otherwise."""
    if any(a.op != "noop" for r in reports for a in r.applied):
        return None
    dropped = [d for r in reports for d in r.dropped]
    if not dropped:
        return None
    return "; ".join(f"operation {d.index} ({d.op}) was dropped: {d.reason}" for d in dropped[:5])


def parse_proposal(reply: Any, *, text_tool_calls: bool = True) -> list[Any]:
    """The operation list from a tool call — structured, or written as text when
    `text_tool_calls` (the `text_tool_calls` setting) — or from a bare JSON object;
    ProposalError otherwise."""
    if getattr(reply, "invalid_tool_calls", None):
        bad = reply.invalid_tool_calls[0]
        raise ProposalError(f"the memory model sent malformed tool arguments: {bad.get('error')}")
    calls = getattr(reply, "tool_calls", None) or []
    for call in calls:
        if call["name"] == SUBMIT_TOOL:
            return _operations(call["args"])
    if len(calls) == 1:
        # Its only tool, misnamed (a small model's `write_memory`): nothing else was
        # offered, and the operations are checked like any others.
        return _operations(calls[0]["args"])
    text = reply.text.strip() if hasattr(reply, "text") else ""
    if text and text_tool_calls:
        written = _written_submit(text)
        if written is not None:
            return written
    if text:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProposalError(
                f"the memory model answered with text, not {SUBMIT_TOOL}: {exc.msg}"
            ) from None
        if isinstance(data, dict) and isinstance(data.get("operations"), list):
            return data["operations"]
    raise ProposalError(f"the memory model did not call {SUBMIT_TOOL}")


def _operations(args: Any) -> list[Any]:
    operations = args.get("operations") if isinstance(args, dict) else None
    if not isinstance(operations, list):
        raise ProposalError(f"{SUBMIT_TOOL} needs an 'operations' list")
    return operations


def _written_submit(text: str) -> list[Any] | None:
    """The operations of a `submit_memory_operations` call written as text (a small model
    that answers the forced tool call in its content), checked against the tool's schema
    like the main agent's text calls (runtime/text_tool_calls.py); None: no such call."""
    from invincat_server.runtime.text_tool_calls import find_text_tool_calls

    schema = submit_tool_schema()["function"]["parameters"]
    for call in find_text_tool_calls(text, {SUBMIT_TOOL: schema}, any_name_as=SUBMIT_TOOL).calls:
        if call.error is not None:
            raise ProposalError(f"the memory model wrote {SUBMIT_TOOL} as text, but {call.error}")
        return _operations(call.args)
    return None


class _FileSet:
    """Files named by paths relative to a root, recognised under any name: the same path
    written otherwise, or another name of the same file (a CLAUDE.md that is a link to
    AGENTS.md, a hard link), by device and inode."""

    def __init__(self, paths: list[str], root: Path) -> None:
        self.root = root
        self.paths = {self._normal(p) for p in paths}
        self.identities = {key for p in paths if (key := self._identity(p)) is not None}

    def _normal(self, path: str) -> Path:
        return Path(os.path.normpath(self.root / path))

    def _identity(self, path: str) -> tuple[int, int] | None:
        try:  # stat only, links followed: nothing is opened or read
            info = os.stat(self.root / path)
        except (OSError, ValueError):
            return None
        return info.st_dev, info.st_ino

    def holds(self, path: str) -> bool:
        if "\0" in path or not (self.paths or self.identities):
            return False
        if self._normal(path) in self.paths:
            return True
        key = self._identity(path)
        return key is not None and key in self.identities


def _reads_one_of(result: tuple[str, dict[str, Any], str], files: _FileSet) -> bool:
    """Whether a file tool's result is of one of `files`."""
    tool, args, _ = result
    path = args.get("path")
    return tool in FILE_TOOLS and isinstance(path, str) and files.holds(path)


def _without_reads_of(
    results: list[tuple[str, dict[str, Any], str]], paths: list[str], root: Path
) -> list[tuple[str, dict[str, Any], str]]:
    """`results` but the file tools' results of the files at `paths` (stat: a thread)."""
    files = _FileSet(paths, root)
    return [r for r in results if not _reads_one_of(r, files)]


class MemoryAgent:
    def __init__(
        self,
        *,
        service: Any,
        cursors: MemoryCursors,
        model_factory: Callable[[], Any],
        redact: Callable[[str], str],
        config: MemoryAgentConfig,
        text_tool_calls: bool = True,
        instruction_files: Callable[[], list[str]] | None = None,
    ) -> None:
        self.service = service
        self.instruction_files = instruction_files
        """The project's instruction files the main agent is shown (runtime/instructions):
        named to the memory model, which must not copy them into memory."""
        self.cursors = cursors
        self._model_factory = model_factory
        self._model: Any = None
        self._constrained: dict[bool, Any] = {}  # by whether noop is allowed
        self.redact = redact
        self.config = config
        self.text_tool_calls = text_tool_calls
        self._locks: dict[str, asyncio.Lock] = {}
        self._last_run: dict[str, float] = {}
        self._turns_since: dict[str, int] = {}
        self.failures = 0

    def should_run(self, thread_id: str, messages: Sequence[Any]) -> bool:
        if not self.config.enabled or not turn_is_memorable(messages):
            return False
        self._turns_since[thread_id] = self._turns_since.get(thread_id, 0) + 1
        if self._turns_since[thread_id] < self.config.min_turn_interval:
            return False
        last = self._last_run.get(thread_id)
        return last is None or time.monotonic() - last >= self.config.min_seconds_between_runs

    async def run(
        self, thread_id: str, messages: Sequence[Any], emit: Callable[[Event], None]
    ) -> None:
        lock = self._locks.setdefault(thread_id, asyncio.Lock())
        async with lock:
            self._last_run[thread_id] = time.monotonic()
            self._turns_since[thread_id] = 0
            started: list[Event] = []

            def tracked(event: Event) -> None:
                started.append(event)
                emit(event)

            try:
                await self._run(thread_id, messages, tracked)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # background work: log and count, never break the session
                self.failures += 1
                reason = self.redact(f"{type(exc).__name__}: {exc}")
                # Logs reach the editor's log file: redacted like everything stored.
                log.warning("memory extraction failed for %s: %s", thread_id, reason)
                await self._record_failure(thread_id, reason)
            finally:
                if started:
                    changed = any(isinstance(e, MemoryChanged) for e in started)
                    emit(MemoryIdle(changed=changed))

    async def _record_failure(self, thread_id: str, reason: str) -> None:
        """Store why a run failed, redacted: it is written to disk and quoted to the
        memory model in the next run (an error can echo the model's own output)."""
        await self.cursors.record_failure(thread_id, self.redact(reason))

    async def _ask(
        self, content: str, *, constrained: bool = False, must_store: bool = False
    ) -> Any:
        """The memory model's answer: through its submit tool, or (`constrained`, when an
        answer through the tool could not be used) as JSON the server is asked to keep to
        the operations' schema, with no tool offered; `must_store`: a schema without noop."""
        from langchain_core.messages import HumanMessage, SystemMessage

        if constrained:
            allow_noop = not must_store
            if allow_noop not in self._constrained:
                self._constrained[allow_noop] = self._model_factory().bind(
                    response_format=constrained_output(allow_noop=allow_noop)
                )
            model = self._constrained[allow_noop]
            content += f"\n\n{CONSTRAINED_NOTE}"
        else:
            if self._model is None:
                self._model = self._model_factory().bind_tools(
                    [submit_tool_schema()], tool_choice=SUBMIT_TOOL
                )
            model = self._model
        return await model.ainvoke([SystemMessage(SYSTEM_PROMPT), HumanMessage(content)])

    async def _apply(
        self, thread_id: str, operations: list[Any], anchor: str, cited_files: set[str]
    ) -> tuple[list[Any], str | None]:
        """The reports of the batches applied (one per scope), and why the first rejected
        one was rejected (the batches after it are not tried), or None."""
        by_scope: dict[str, list[Any]] = {}
        for op in operations:
            scope = op.get("scope") if isinstance(op, dict) else None
            if isinstance(op, dict) and op.get("op") == "noop" and scope is None:
                continue
            by_scope.setdefault(scope if scope in ("user", "project") else "project", []).append(op)
        reports: list[Any] = []
        for scope, ops in by_scope.items():
            report = await asyncio.to_thread(
                self.service.apply,
                scope,
                {"operations": ops},
                actor="memory_agent",
                thread_id=thread_id,
                anchor=anchor,
                cited_files=cited_files,
            )
            if report.rejected:
                return reports, f"The batch for scope {scope} was rejected: {report.reason}"
            reports.append(report)
        return reports, None

    async def _propose(
        self,
        thread_id: str,
        content: Callable[[str | None], str],
        rejection: str | None,
        anchor: str,
        cited_files: set[str],
        explicit: bool = False,
    ) -> list[Any] | None:
        """Ask the memory model (its message made by `content` from the last rejection)
        and apply its batches: their reports, or None when the run failed (recorded)."""
        must_store = False
        for attempt in range(1 + RETRIES):
            try:
                # After an explicit request, a constrained answer may not be a noop either
                # when the first answer could not be used at all: the 1.5B model's retry
                # then answered noop (bench run 29).
                reply = await self._ask(
                    content(rejection), constrained=attempt > 0, must_store=must_store or explicit
                )
                operations = parse_proposal(reply, text_tool_calls=self.text_tool_calls)
            except (ProposalError, ModelOutputError) as exc:  # malformed structured arguments
                self.failures += 1
                rejection = self.redact(str(exc))
                log.warning("memory proposal unusable for %s: %s", thread_id, rejection)
                if attempt < RETRIES:
                    continue
                await self._record_failure(thread_id, rejection)
                return None
            reports, rejection = await self._apply(thread_id, operations, anchor, cited_files)
            if rejection is None:
                dropped = all_dropped(reports)
                if dropped is None and explicit and stored_nothing(reports):
                    # Asked again under a schema with no noop: told so in words, the
                    # 1.5B model answered noop again (bench runs 27-28). What it then
                    # proposes is governed like any other proposal.
                    dropped, must_store = NOTHING_STORED, True
                if dropped is None or attempt >= RETRIES:
                    return reports
                # Nothing of it was stored: asked again with why (Qwen2.5-Coder-1.5B left
                # out `section`). Dropped again, the run ends as before: a drop is no failure.
                rejection = self.redact(dropped)
                continue
            self.failures += 1
            rejection = self.redact(rejection)  # sent to the memory model with the retry
            # Asked again only when nothing of this batch was applied: a retry of a
            # partly applied one would propose the applied operations twice.
            if attempt < RETRIES and not reports:
                continue
            await self._record_failure(thread_id, rejection)
            return None
        return None  # not reached: the last attempt returns

    async def _run(
        self, thread_id: str, messages: Sequence[Any], emit: Callable[[Event], None]
    ) -> None:
        cursor = await self.cursors.get(thread_id)
        start = 0
        if cursor is not None and 0 < cursor.position <= len(messages):
            if fingerprint(messages[cursor.position - 1]) == cursor.anchor:
                start = cursor.position
        # start == 0 with a cursor means the history was compacted or rewritten: a bounded
        # full extraction (the slice is capped to its newest 12,000 characters).
        new = list(messages[start:])
        conversation, results = conversation_text(new, self.redact)
        if not conversation.strip():
            return
        emit(MemoryUpdating())
        entries = [e.model_dump(mode="json") for e in await asyncio.to_thread(self.service.list)]
        instructions = (
            await asyncio.to_thread(self.instruction_files) if self.instruction_files else []
        )
        # A read of AGENTS.md is no evidence for memory: the file is shown on every call,
        # under whichever name it was read.
        evidence_results = await asyncio.to_thread(
            _without_reads_of, results, instructions, self.service.project_root
        )
        evidence = [item.to_dict() for item in collect_evidence(evidence_results, self.redact)]
        stale_pairs = await asyncio.to_thread(self.service.stale_entries)
        stale = stale_evidence(stale_pairs, self.service.project_root, self.redact)
        # What this run may cite: files the conversation's file tools touched, and the
        # files of the stale entries it is asked about.
        cited_files = {
            str(args["path"])
            for tool, args, _ in results
            if tool in FILE_TOOLS and isinstance(args.get("path"), str)
        } | {c.path for entry, _ in stale_pairs for c in entry.citations}
        explicit = any(
            is_explicit_request(m.text) for m in new if type(m).__name__ == "HumanMessage"
        )

        def content(rejection: str | None) -> str:
            return user_message(
                conversation=self.redact(conversation),
                snapshot=self.redact(snapshot_text(entries)),
                evidence=evidence,
                explicit=explicit,
                last_rejection=rejection,
                stale=stale,
                instruction_files=[self.redact(path) for path in instructions],
            )

        anchor = fingerprint(messages[-1])
        first = cursor.last_rejection if cursor else None
        reports = await self._propose(thread_id, content, first, anchor, cited_files, explicit)
        if reports is None:
            return
        await self.cursors.advance(thread_id, len(messages), anchor)
        for report in reports:
            if any(a.op != "noop" for a in report.applied):
                emit(MemoryChanged(scope=report.scope, batch_id=report.batch_id))
