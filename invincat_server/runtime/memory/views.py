"""The JSON shapes of the memory views: list, show, log and verify.

One place builds them for every front end: `invincat memory … --json` (terminal), the
language server's `invincat/memory/*` and the ACP `_invincat/memory/*` extension, so an
editor and a script see the same fields (docs/protocol.md, "Memory"). Each function is
synchronous (the service takes file locks and stats cited files); servers run it in a
worker thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from invincat_server.runtime.memory.models import Entry
    from invincat_server.runtime.memory.service import MemoryService


def entry_view(service: MemoryService, entry: Entry) -> dict[str, Any]:
    """An entry as front ends show it: as stored, plus `stale` and, when it has
    citations, `verification` (state, note, each citation's verdict)."""
    data = entry.to_json()
    verdict = service.check_entry(entry)
    data["stale"] = bool(verdict is not None and verdict.stale)
    if verdict is not None:
        data["verification"] = verdict.to_json()
    return data


def list_view(
    service: MemoryService,
    scope: str | None = None,
    *,
    include_archived: bool = False,
    tier: str | None = None,
    with_problems: bool = True,
) -> dict[str, Any]:
    """`{"items", "stores"}`, plus `problems` (scope: what to do) when a store could not be
    read, and `invalid_entries` when entries were skipped because they do not validate
    (`{scope, index, id, reason}` each). The terminal passes `with_problems=False`: it
    prints the problems on stderr instead."""
    entries = service.list(scope, include_archived=include_archived, tier=tier)
    result: dict[str, Any] = {
        "items": [entry_view(service, entry) for entry in entries],
        "stores": {name: str(path) for name, path in service.store_paths().items()},
    }
    if invalid := service.invalid_entries(scope):
        result["invalid_entries"] = [bad.to_json() for bad in invalid]
    if with_problems and (problems := service.problems()):
        result["problems"] = problems
    return result


def show_view(service: MemoryService, entry_id: str) -> dict[str, Any] | None:
    """`{"entry", "history"}` (entry None once deleted, or when the stored entry does not
    validate: then `invalid_entry` says why); None when the id never existed."""
    from invincat_server.runtime.memory.models import id_scope

    entry, history = service.show(entry_id)  # refuses what is not an id
    skipped = service.invalid_entries(id_scope(entry_id))
    invalid = next((b for b in skipped if b.id == entry_id), None)
    if entry is None and not history and invalid is None:
        return None
    result: dict[str, Any] = {
        "entry": entry_view(service, entry) if entry is not None else None,
        "history": [record.model_dump(mode="json") for record in history],
    }
    if invalid is not None and entry is None:
        result["invalid_entry"] = invalid.to_json()
    return result


def log_view(
    service: MemoryService,
    scope: str | None = None,
    limit: int | None = None,
    author: str | None = None,
) -> list[dict[str, Any]]:
    """Journal records, newest first, as JSON objects; with `author`, only the batches
    that author made or that changed an entry they proposed (attribution.record_matches)."""
    if author is None:
        return [record.model_dump(mode="json") for record in service.log(scope, limit)]
    from invincat_server.runtime.memory.attribution import record_matches

    found = [record.model_dump(mode="json") for record in service.log(scope)]
    found = [record for record in found if record_matches(record, author)]
    return found if limit is None else found[:limit]


def verify_view(
    service: MemoryService, scope: str | None = None, *, include_archived: bool = False
) -> dict[str, Any]:
    """`invincat memory verify` / `invincat/memory/verify`: every cited entry's verdict,
    and the entries skipped because they do not validate (`invalid_entries`)."""
    checked = service.verify(scope, include_archived=include_archived)
    invalid = [bad.to_json() for bad in service.invalid_entries(scope)]
    entries = [
        {"scope": e.scope, "status": e.status, "section": e.section, "content": e.content}
        | v.to_json()
        for e, v in checked
    ]
    return {
        "entries": entries,
        "checked": len(entries),
        "stale": sum(1 for _, v in checked if v.stale),
        "moved": sum(1 for _, v in checked if v.moved and not v.stale),
        "invalid": len(invalid),
        "invalid_entries": invalid,
    }
