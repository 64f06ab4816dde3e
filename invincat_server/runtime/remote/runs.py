"""Background runs of Invincat's worker agent on configured LangGraph deployments, through
the official `langgraph_sdk` client: start one, list the threads whose approvals wait,
decide them, cancel a run. The CLI (`invincat chat --remote`, `invincat remote …`) and the
language server (`invincat/remote/*`) both call this module and only translate its answers.

Deployments are the `remote` entries of subagents.json (runtime/extensions/
remote_subagents.py): `url`, `graph_id`, `api_key_env` (user file only: the key is read
from that environment variable, never from a file, and never shown).

What a server answers is data from elsewhere: every field is checked for its type, one
thread or interrupt that does not fit is left out of a listing (counted in `skipped`), and
every text shown is cut and redacted (tool_phrases.py) before it reaches a person.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from invincat_server.runtime.extensions.remote_subagents import RemoteAgent, load_remote_agents
from invincat_server.runtime.tool_phrases import phrase, shown

ErrorKind = Literal["unknown_deployment", "unreachable", "refused", "not_found", "not_pending"]
APPROVAL_KIND = "tool_approval"
MAX_PROMPT_CHARS = 100_000
MAX_LISTED_THREADS = 100
THREAD_ID_CHARS = 200
NO_DEPLOYMENT = (
    'No remote deployment is configured: add one under "remote" in '
    "$INVINCAT_HOME/subagents.json (docs/remote.md)."
)


class RemoteError(Exception):
    """A remote request that failed, in one sentence; `kind` for front ends' codes."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class PendingCall:
    tool_name: str
    summary: str
    """The call's redacted, cut title ("Write notes.txt"); never its raw arguments."""
    tool_call_id: str
    approval_id: str


@dataclass(frozen=True)
class PendingThread:
    deployment: str
    thread_id: str
    kind: str
    calls: tuple[PendingCall, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "deployment": self.deployment,
            "thread_id": self.thread_id,
            "kind": self.kind,
            "calls": [
                {
                    "tool_name": c.tool_name,
                    "summary": c.summary,
                    "tool_call_id": c.tool_call_id,
                    "approval_id": c.approval_id,
                }
                for c in self.calls
            ],
        }


@dataclass(frozen=True)
class Listing:
    pending: tuple[PendingThread, ...]
    skipped: int
    """Threads or interrupts the server sent in a shape Invincat does not know."""

    def to_json(self) -> dict[str, Any]:
        return {"pending": [p.to_json() for p in self.pending], "skipped": self.skipped}


def _text(value: object, limit: int = THREAD_ID_CHARS) -> str | None:
    """A non-empty string without NUL of at most `limit` characters, else None."""
    if not isinstance(value, str) or not value or len(value) > limit or "\x00" in value:
        return None
    return value


def _pending_call(raw: object) -> PendingCall | None:
    if not isinstance(raw, Mapping):
        return None
    tool = _text(raw.get("tool_name"), 200)
    call_id = _text(raw.get("tool_call_id"))
    approval_id = _text(raw.get("approval_id"))
    if tool is None or call_id is None or approval_id is None:
        return None
    args = raw.get("args")
    return PendingCall(
        tool_name=shown(tool, 80) or "?",
        summary=phrase(tool, args if isinstance(args, Mapping) else {}).title,
        tool_call_id=call_id,
        approval_id=approval_id,
    )


def interrupt_calls(value: object) -> tuple[str, tuple[PendingCall, ...]] | None:
    """(kind, calls) of one interrupt ApprovalMiddleware raised; None for another shape.
    One malformed request makes the whole interrupt unknown: deciding only part of a batch
    would let the undecided calls run (approval_middleware.py)."""
    if not isinstance(value, Mapping):
        return None
    kind = _text(value.get("kind"), 40)
    requests = value.get("requests")
    if kind is None or not isinstance(requests, list) or not requests:
        return None
    calls = [_pending_call(r) for r in requests]
    if any(c is None for c in calls):
        return None
    return kind, tuple(c for c in calls if c is not None)


def _thread_interrupts(thread: Mapping[str, Any]) -> list[object]:
    raw = thread.get("interrupts")
    values: list[object] = []
    if isinstance(raw, Mapping):
        for items in raw.values():
            if isinstance(items, list):
                values.extend(i.get("value") if isinstance(i, Mapping) else None for i in items)
            else:
                values.append(None)
    elif isinstance(raw, list):
        values.extend(i.get("value") if isinstance(i, Mapping) else None for i in raw)
    return values


class RemoteRuns:
    """Clients for the configured deployments (one per name, opened on first use)."""

    def __init__(self, deployments: dict[str, RemoteAgent]) -> None:
        self.deployments = deployments
        self._clients: dict[str, Any] = {}

    @classmethod
    def load(cls, home: Path, project_root: Path, notify: Callable[[str], None]) -> RemoteRuns:
        return cls(load_remote_agents(home, project_root, notify))

    def _deployment(self, name: str) -> RemoteAgent:
        found = self.deployments.get(name)
        if found is None:
            known = ", ".join(sorted(self.deployments)) or "none"
            raise RemoteError(
                "unknown_deployment",
                f"No remote deployment named {name!r} (configured: {known}). Add it under "
                '"remote" in $INVINCAT_HOME/subagents.json (docs/remote.md).',
            )
        return found

    def _client(self, name: str) -> Any:
        if name not in self._clients:
            from langgraph_sdk import get_client

            config = self._deployment(name).config
            key = os.environ.get(config.api_key_env) if config.api_key_env else None
            # api_key=None, not omitted: the SDK would otherwise send LANGSMITH_API_KEY &
            # co. from the environment to whatever server is configured.
            self._clients[name] = get_client(url=config.url, api_key=key, timeout=config.timeout)
        return self._clients[name]

    async def _call(self, name: str, action: str, coro: Any) -> Any:
        import httpx

        url = self._deployment(name).config.url
        try:
            return await coro
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status == 404:
                raise RemoteError("not_found", f"{name} ({url}) has no such thread.") from exc
            if status == 422:
                raise RemoteError(
                    "not_found", f"{name} ({url}) refused to {action}: not a thread id."
                ) from exc
            raise RemoteError(
                "refused", f"{name} ({url}) refused to {action}: HTTP {status}."
            ) from exc
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise RemoteError(
                "unreachable",
                f"Cannot reach the remote deployment {name} at {url} to {action}: {reason}. "
                "Is it running, and is its url in subagents.json right?",
            ) from exc

    # starting -----------------------------------------------------------------
    async def start(self, name: str, prompt: str) -> dict[str, str]:
        """A new thread and a background run of `prompt` on it; returns at once."""
        config = self._deployment(name).config
        if not prompt.strip():
            raise RemoteError("refused", "The prompt is empty: say what the remote agent does.")
        if len(prompt) > MAX_PROMPT_CHARS or "\x00" in prompt:
            raise RemoteError(
                "refused", f"The prompt must be text of at most {MAX_PROMPT_CHARS} characters."
            )
        client = self._client(name)
        thread = await self._call(name, "create a thread", client.threads.create())
        run = await self._call(
            name,
            "start a run",
            client.runs.create(
                thread["thread_id"],
                config.graph_id,
                input={"messages": [{"role": "user", "content": prompt}]},
            ),
        )
        return {
            "deployment": name,
            "thread_id": str(thread["thread_id"]),
            "run_id": str(run["run_id"]),
            "status": str(run.get("status") or "pending"),
        }

    async def wait(self, name: str, thread_id: str, run_id: str) -> str:
        """Block until the run ends or stops at an approval; its final status."""
        client = self._client(name)
        await self._call(name, "wait for the run", client.runs.join(thread_id, run_id))
        run = await self._call(name, "read the run", client.runs.get(thread_id, run_id))
        return str(run.get("status") or "unknown")

    # listing ------------------------------------------------------------------
    async def pending(self, name: str | None = None) -> Listing:
        """Threads of `name` (else of every deployment) whose run waits for a decision."""
        names = [self._deployment(name).name] if name else sorted(self.deployments)
        if not names:
            raise RemoteError("unknown_deployment", NO_DEPLOYMENT)
        found: list[PendingThread] = []
        skipped = 0
        for each in names:
            threads, bad = await self._pending_of(each)
            found.extend(threads)
            skipped += bad
        return Listing(tuple(found), skipped)

    async def _pending_of(self, name: str) -> tuple[list[PendingThread], int]:
        client = self._client(name)
        threads = await self._call(
            name,
            "list threads",
            client.threads.search(status="interrupted", limit=MAX_LISTED_THREADS),
        )
        graph_id = self._deployment(name).config.graph_id
        found: list[PendingThread] = []
        skipped = 0
        for thread in threads if isinstance(threads, list) else []:
            item = self._pending_thread(name, graph_id, thread)
            if item is None:
                skipped += 1
            elif item.calls:
                found.append(item)
        return found, skipped

    @staticmethod
    def _pending_thread(name: str, graph_id: str, thread: object) -> PendingThread | None:
        if not isinstance(thread, Mapping):
            return None
        thread_id = _text(thread.get("thread_id"))
        if thread_id is None:
            return None
        metadata = thread.get("metadata")
        if isinstance(metadata, Mapping) and metadata.get("graph_id") not in (None, graph_id):
            return PendingThread(name, thread_id, "other graph", ())  # not ours: not listed
        kinds: list[str] = []
        calls: list[PendingCall] = []
        for value in _thread_interrupts(thread):
            parsed = interrupt_calls(value)
            if parsed is None:
                return None
            kinds.append(parsed[0])
            calls.extend(parsed[1])
        kind = kinds[0] if len(set(kinds)) == 1 else "mixed"
        return PendingThread(name, thread_id, kind, tuple(calls))

    async def _find(self, thread_id: str, name: str | None) -> PendingThread:
        """The pending approvals of `thread_id` (on `name`, else wherever it is)."""
        if _text(thread_id) is None:
            raise RemoteError("not_found", f"{thread_id[:80]!r} is not a thread id.")
        names = [self._deployment(name).name] if name else sorted(self.deployments)
        if not names:
            raise RemoteError("unknown_deployment", NO_DEPLOYMENT)
        for each in names:
            client = self._client(each)
            try:
                thread = await self._call(each, "read the thread", client.threads.get(thread_id))
            except RemoteError as exc:
                if exc.kind == "not_found":
                    continue
                raise
            item = self._pending_thread(each, self._deployment(each).config.graph_id, thread)
            if item is None:
                raise RemoteError(
                    "refused",
                    f"Thread {thread_id} on {each} waits on something Invincat "
                    "does not know how to answer.",
                )
            return item
        where = name or ", ".join(names)
        raise RemoteError("not_found", f"No thread {thread_id} on {where}.")

    # deciding -----------------------------------------------------------------
    async def decide(
        self,
        thread_id: str,
        *,
        reject: bool = False,
        message: str | None = None,
        deployment: str | None = None,
    ) -> dict[str, Any]:
        """Approve (or reject) every call the thread's run waits on, and resume it in the
        background. Every call of the batch gets a decision: an undecided one would run."""
        from invincat_server.runtime.policy import decisions

        item = await self._find(thread_id, deployment)
        if not item.calls:
            raise RemoteError("not_pending", f"Thread {thread_id} waits for no approval.")
        if item.kind != APPROVAL_KIND:
            raise RemoteError(
                "refused",
                f"Thread {thread_id} waits on a {item.kind!r} request, not a tool "
                "approval; it cannot be answered with approve or reject.",
            )
        decision = (decisions.reject(message) if reject else decisions.approve()).model_dump(
            exclude_none=True
        )
        resume = {"decisions": {call.tool_call_id: decision for call in item.calls}}
        config = self._deployment(item.deployment).config
        run = await self._call(
            item.deployment,
            "resume the thread",
            self._client(item.deployment).runs.create(
                thread_id, config.graph_id, command={"resume": resume}
            ),
        )
        return {
            "deployment": item.deployment,
            "thread_id": thread_id,
            "run_id": str(run["run_id"]),
            "decision": "reject" if reject else "approve",
            "calls": [c.summary for c in item.calls],
        }

    # cancelling ---------------------------------------------------------------
    async def cancel(self, thread_id: str, deployment: str | None = None) -> dict[str, Any]:
        """Cancel the thread's pending and running runs (waiting until they stopped)."""
        item = await self._find(thread_id, deployment)
        client = self._client(item.deployment)
        cancelled: list[str] = []
        for status in ("running", "pending"):
            runs = await self._call(
                item.deployment, "list runs", client.runs.list(thread_id, status=status)
            )
            for run in runs if isinstance(runs, list) else []:
                run_id = _text(run.get("run_id")) if isinstance(run, Mapping) else None
                if run_id is None:
                    continue
                await self._call(
                    item.deployment,
                    "cancel the run",
                    client.runs.cancel(thread_id, run_id, wait=True),
                )
                cancelled.append(run_id)
        if not cancelled:
            waiting = " (it waits for an approval: reject it instead)" if item.calls else ""
            raise RemoteError("not_pending", f"Thread {thread_id} has no run to cancel{waiting}.")
        return {"deployment": item.deployment, "thread_id": thread_id, "cancelled": cancelled}

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        await asyncio.gather(*(c.aclose() for c in clients), return_exceptions=True)
