"""Memory extension methods: `_invincat/memory/list|show|apply|log|revert`.

The same operations and result shapes as the language server's `invincat/memory/*`
(docs/protocol.md), plus `sessionId` (the memory of that session's project). Every change
goes through governance and the journal with actor `user`; a change that touched a store
is announced with the `_invincat/memory/changed` notification. Runs in a worker thread
(the service is synchronous: file locks, fsync).

The reads (`list`, `show`, `log`) go through the quick reader (runtime/memory/reader.py),
like the CLI's and the language server's: the same JSON, without validating every entry
with the models. Whenever it cannot vouch for the files (damage, a conflict) or the
service reports a store problem, the service answers as before.
"""

from __future__ import annotations

import os
import weakref
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


def call_memory_method(
    runtime: Any, method: str, params: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, list[str]]]]:
    """(the result, the (scope, batch ids) whose store changed)."""
    from invincat_server.runtime.memory import (
        BatchShapeError,
        MemoryStoreError,
        UnknownBatchError,
        UnknownEntryError,
    )

    service = runtime.memory
    try:
        return _dispatch(service, method, params)
    except (UnknownBatchError, UnknownEntryError) as exc:
        raise RequestError(UNKNOWN_MEMORY, str(exc)) from None
    except BatchShapeError as exc:
        raise RequestError(INVALID_PARAMS, str(exc)) from None
    except MemoryStoreError as exc:
        raise RequestError(MEMORY_UNAVAILABLE, str(exc)) from None
    except OSError as exc:
        where = exc.filename or "the memory store"
        raise RequestError(
            MEMORY_UNAVAILABLE,
            f"Cannot access {where}: {exc.strerror or exc}. Check its permissions and the "
            "free disk space, then retry.",
        ) from None


_READERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""One quick reader per MemoryService, kept so its staleness checker's stat cache serves
later reads (a new reader would re-read and re-hash every cited file)."""
_FULL = object()


def _quick(service: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """The quick reader's view for `service`'s stores, or `_FULL` (the service answers)."""
    from invincat_server.runtime.memory.reader import FULL_READ_ENV, MemoryReader, NotSimple

    if os.environ.get(FULL_READ_ENV) == "1" or service.problems():
        return _FULL
    reader = _READERS.get(service)
    if reader is None:
        reader = _READERS[service] = MemoryReader(service.home, service.project_root)
    try:
        return getattr(reader, method)(*args, **kwargs)
    except (NotSimple, OSError):
        return _FULL


def _dispatch(
    service: Any, method: str, params: dict[str, Any]
) -> tuple[dict[str, Any], list[tuple[str, list[str]]]]:
    from invincat_server.runtime.memory import views

    if method == "invincat/memory/list":
        p = _parse(ListParams, method, params)
        kwargs = {"include_archived": p.include_archived, "tier": p.tier}
        listed = _quick(service, "list_view", p.scope, **kwargs)
        if listed is _FULL:
            listed = views.list_view(service, p.scope, **kwargs)
        return listed, []
    if method == "invincat/memory/show":
        p = _parse(ShowParams, method, params)
        view = _quick(service, "show_view", p.id)
        if view is _FULL:
            view = views.show_view(service, p.id)
        if view is None:
            raise RequestError(
                UNKNOWN_MEMORY,
                f"No memory entry {p.id}; `_invincat/memory/list` with includeArchived lists "
                "the ids that exist.",
            )
        return view, []
    if method == "invincat/memory/log":
        p = _parse(LogParams, method, params)
        records = _quick(service, "log_view", p.scope, p.limit)
        if records is _FULL:
            records = views.log_view(service, p.scope, p.limit)
        return {"records": records}, []
    if method == "invincat/memory/apply":
        p = _parse(ApplyParams, method, params)
        bad = [str(i) for i, op in enumerate(p.operations) if not isinstance(op.get("op"), str)]
        if bad:
            raise RequestError(
                INVALID_PARAMS,
                f"Invalid params for _{method}: every operation needs an `op` string "
                f'(e.g. {{"op": "archive", "id": "mem_p_000001", "reason": "..."}}); '
                f"operations {', '.join(bad)} have none.",
            )
        report = service.apply(p.scope, {"operations": p.operations}, actor=ACTOR)
        return report.to_json(), _changes(report)
    p = _parse(RevertParams, method, params)
    report = service.revert(p.batch_id, actor=ACTOR)
    return report.to_json(), _changes(report)


def _changes(report: Any) -> list[tuple[str, list[str]]]:
    if not (report.changed or report.cleanup_batch_id):
        return []
    return [(report.scope, [b for b in (report.batch_id, report.cleanup_batch_id) if b])]


def summary(runtime: Any) -> str:
    """The `/memory` command: what is remembered, as text for the chat."""
    entries = runtime.memory.list()
    if not entries:
        return "Invincat remembers nothing yet for you or this project."
    lines = ["What Invincat remembers (manage it with `invincat memory ...`):"]
    for entry in entries:
        lines.append(f"- [{entry.scope}] {entry.content} ({entry.id})")
    return "\n".join(lines)
