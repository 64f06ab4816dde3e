"""Memory extension methods: `_invincat/memory/list|show|apply|log|revert`.

The same operations and result shapes as the language server's `invincat/memory/*`
(docs/protocol.md), plus `sessionId` (the memory of that session's project). Every change
goes through governance and the journal with actor `user`; a change that touched a store
is announced with the `_invincat/memory/changed` notification. Runs in a worker thread
(the service is synchronous: file locks, fsync).

Every method goes through the project's memory views (runtime/project/memory_views.py),
the language server's too: the reads (`list`, `show`, `log`) through the quick reader when
it can vouch for the files, else the service; one error mapping, translated here to
JSON-RPC codes.
"""

from __future__ import annotations

from typing import Any, Literal

from acp import RequestError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

MEMORY_METHODS = frozenset(
    {
        "invincat/memory/list",
        "invincat/memory/show",
        "invincat/memory/apply",
        "invincat/memory/log",
        "invincat/memory/revert",
    }
)
CHANGED = "invincat/memory/changed"
ACTOR = "user"
INVALID_PARAMS = -32602
MEMORY_UNAVAILABLE = -32014
UNKNOWN_MEMORY = -32015

Scope = Literal["user", "project"]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    session_id: str = Field(alias="sessionId")


class ListParams(_Params):
    scope: Scope | None = None
    include_archived: bool = Field(default=False, alias="includeArchived")
    tier: Literal["hot", "warm", "cold"] | None = None


class ShowParams(_Params):
    id: str


class ApplyParams(_Params):
    scope: Scope
    operations: list[dict[str, Any]] = Field(min_length=1)


class LogParams(_Params):
    scope: Scope | None = None
    limit: int = Field(default=50, ge=1)
    author: str | None = Field(default=None, min_length=1, max_length=400)


class RevertParams(_Params):
    batch_id: str = Field(alias="batchId")


def _parse(model: type[BaseModel], method: str, params: dict[str, Any]) -> Any:
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'params'}: {err['msg']}"
            for err in exc.errors()
        )
        raise RequestError(INVALID_PARAMS, f"Invalid params for _{method}: {problems}.") from None


_CODES = {"unknown": UNKNOWN_MEMORY, "invalid": INVALID_PARAMS, "unavailable": MEMORY_UNAVAILABLE}
"""The core's one memory error (runtime/project/memory_views.py) as JSON-RPC codes."""


def call_memory_method(
    project: Any, method: str, params: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, list[str]]]]:
    """(the result, the (scope, batch ids) whose store changed), over `project`'s memory
    views (the core Project every session of its root shares)."""
    from invincat_server.runtime.project import MemoryViewError

    try:
        return _dispatch(project.memory_views, method, params)
    except MemoryViewError as exc:
        message = exc.message
        if exc.kind == "invalid" and not message.startswith("Invalid params"):
            message = f"Invalid params for _{method}: {message}"
        raise RequestError(_CODES[exc.kind], message) from None


def _dispatch(
    views: Any, method: str, params: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, list[str]]]]:
    from invincat_server.runtime.project import changed_batches

    if method == "invincat/memory/list":
        p = _parse(ListParams, method, params)
        return views.list_view(p.scope, include_archived=p.include_archived, tier=p.tier), []
    if method == "invincat/memory/show":
        p = _parse(ShowParams, method, params)
        how = "`_invincat/memory/list` with includeArchived"
        return views.show_view(p.id, how_to_list=how), []
    if method == "invincat/memory/log":
        p = _parse(LogParams, method, params)
        return {"records": views.log_view(p.scope, p.limit, p.author)}, []
    if method == "invincat/memory/apply":
        p = _parse(ApplyParams, method, params)
        report = views.apply(p.scope, p.operations, actor=ACTOR)
    else:
        p = _parse(RevertParams, method, params)
        report = views.revert(p.batch_id, actor=ACTOR)
    changed = changed_batches(report)
    return report.to_json(), [(report.scope, changed)] if changed else []


def summary(runtime: Any, project: Any = None) -> str:
    """The `/memory` command: what is remembered, as text for the chat, and the project's
    instruction files apart (`source: AGENTS.md`: a read-only tier, not memory)."""
    entries = runtime.memory.list()
    if not entries:
        lines = ["Invincat remembers nothing yet for you or this project."]
    else:
        lines = ["What Invincat remembers (manage it with `invincat memory ...`):"]
        for entry in entries:
            lines.append(f"- [{entry.scope}] {entry.content} ({entry.id})")
    files = instruction_lines(project) if project is not None else []
    if files:
        lines += ["", "Instruction files (read-only, shown to the model before memory):", *files]
    return "\n".join(lines)


def instruction_lines(project: Any) -> list[str]:
    from invincat_server.runtime.project import MemoryViewError

    try:
        files = project.memory_views.instructions_view(None)["instructions"]
    except MemoryViewError as exc:
        return [f"- (not listed: {exc.message})"]
    lines = []
    for item in files:
        by = f", imported by {item['imported_by']}" if item["imported_by"] else ""
        if item["skipped"]:
            state = item["skipped"]
        else:
            state = f"{item['included']:,} bytes" + (" (truncated)" if item["truncated"] else "")
        lines.append(f"- {item['path']} (source: {item['source']}{by}): {state}")
    return lines
