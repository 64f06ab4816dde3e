"""Memory views for every front end: the quick reader when it can vouch for the files,
else the full MemoryService — and one mapping of the service's refusals.

`invincat memory …`, the language server's `invincat/memory/*` and ACP's
`_invincat/memory/*` answer with the same JSON. The reads (`list`, `show`, `log`) first
try the quick reader (runtime/memory/reader.py: no pydantic, no MemoryService); whenever
it cannot vouch for a store or journal (damage, a conflict, a problem the service already
reported) the service answers. Every refusal becomes one `MemoryViewError` whose `kind`
front ends translate (a JSON-RPC code, an exit status) and whose message says what to do.

Blocking (file locks, fsync): call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from invincat_server.runtime.project_data import ProjectData

if TYPE_CHECKING:
    from invincat_server.runtime.memory import BatchReport
    from invincat_server.runtime.memory.reader import MemoryReader

R = TypeVar("R")

MemoryErrorKind = Literal["unknown", "invalid", "unavailable"]


class MemoryViewError(Exception):
    """A memory request refused: `unknown` (no such entry or batch), `invalid` (the
    request's shape), `unavailable` (a conflicted or damaged store, a lock held too
    long, an I/O error, a broken `[memory]` config)."""

    def __init__(self, kind: MemoryErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: MemoryErrorKind = kind
        self.message = message


def memory_call(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """Run a MemoryService call; its refusals as MemoryViewError."""
    from invincat_server.runtime.memory import (
        BatchShapeError,
        MemoryStoreError,
        UnknownBatchError,
        UnknownEntryError,
    )

    try:
        return fn(*args, **kwargs)
    except (UnknownBatchError, UnknownEntryError) as exc:
        raise MemoryViewError("unknown", str(exc)) from None
    except BatchShapeError as exc:
        raise MemoryViewError("invalid", str(exc)) from None
    except MemoryStoreError as exc:  # damaged store not backed up, lock timeout, config
        raise MemoryViewError("unavailable", str(exc)) from None
    except OSError as exc:
        where = exc.filename or "the memory store"
        raise MemoryViewError(
            "unavailable",
            f"Cannot access {where}: {exc.strerror or exc}. Check its permissions and the "
            "free disk space, then retry.",
        ) from None


_FULL = object()
"""What `_quick` gives when the MemoryService must answer instead."""


class MemoryViews:
    """The memory views of one project (runtime/project/project.py owns one)."""

    def __init__(self, data: ProjectData) -> None:
        self.data = data
        self.before_quick_read: list[Callable[[MemoryReader], None]] = []
        """Called with the reader before each quick read: the language server watches its
        files then, so a change landing right after the read is still announced."""

    def _quick(self, method: str, *args: Any, **kwargs: Any) -> Any:
        from invincat_server.runtime.memory.reader import NotSimple

        reader = self.data.memory_reader()
        if reader is None:
            return _FULL
        for hook in self.before_quick_read:
            hook(reader)
        try:
            return getattr(reader, method)(*args, **kwargs)
        except (NotSimple, OSError):
            return _FULL

    def _service(self) -> Any:
        return memory_call(self.data.memory)

    def list_view(
        self, scope: str | None, *, include_archived: bool = False, tier: str | None = None
    ) -> dict[str, Any]:
        """The entries, and (but for the user scope) the instruction files next to them."""
        listed = self._quick("list_view", scope, include_archived=include_archived, tier=tier)
        if listed is _FULL:
            from invincat_server.runtime.memory import views

            listed = memory_call(
                views.list_view,
                self._service(),
                scope,
                include_archived=include_archived,
                tier=tier,
            )
        return dict(listed) | self.instructions_view(scope)

    def instructions_view(
        self, scope: str | None, working_dir: Path | None = None
    ) -> dict[str, Any]:
        """`{"instructions": [...]}`: the project's instruction files (runtime/instructions,
        a read-only tier apart from governed memory, never their text), read from the root
        down to `working_dir`; `{}` for a listing of the user scope alone."""
        if scope == "user":
            return {}
        from invincat_server.runtime.config import ConfigError
        from invincat_server.runtime.instructions import instruction_list

        try:
            files = instruction_list(self.data.root, working_dir, home=self.data.settings.home)
        except ConfigError as exc:
            raise MemoryViewError("unavailable", str(exc)) from None
        return {"instructions": files}

    def show_view(
        self, entry_id: str, *, how_to_list: str = "`invincat memory list --all`"
    ) -> dict[str, Any]:
        """The entry; MemoryViewError `unknown` (naming `how_to_list`, the front end's way
        to list the ids) when there is none."""
        view = self._quick("show_view", entry_id)
        if view is _FULL:
            from invincat_server.runtime.memory import views

            view = memory_call(views.show_view, self._service(), entry_id)
        if view is None:
            raise MemoryViewError(
                "unknown", f"No memory entry {entry_id}; {how_to_list} lists the ids that exist."
            )
        return dict(view)

    def log_view(
        self, scope: str | None, limit: int | None, author: str | None = None
    ) -> list[dict[str, Any]]:
        """Journal records, newest first; with `author`, those of that author (a
        case-insensitive part of `Name <email>`: runtime/memory/attribution.py)."""
        records = self._quick("log_view", scope, limit, author)
        if records is _FULL:
            from invincat_server.runtime.memory import views

            records = memory_call(views.log_view, self._service(), scope, limit, author)
        return list(records)

    def apply(self, scope: str, operations: list[dict[str, Any]], *, actor: str) -> BatchReport:
        bad = [str(i) for i, op in enumerate(operations) if not isinstance(op.get("op"), str)]
        if bad:
            raise MemoryViewError(
                "invalid",
                "every operation needs an `op` string "
                '(e.g. {"op": "archive", "id": "mem_p_000001", "reason": "..."}); '
                f"operations {', '.join(bad)} have none.",
            )
        service = self._service()
        return memory_call(service.apply, scope, {"operations": operations}, actor=actor)

    def verify_view(self, scope: str | None, *, include_archived: bool = False) -> dict[str, Any]:
        """Checks every citation: always the full service (citations.py, staleness.py)."""
        from invincat_server.runtime.memory import views

        return memory_call(
            views.verify_view, self._service(), scope, include_archived=include_archived
        )

    def revert(self, batch_id: str, *, actor: str) -> BatchReport:
        service = self._service()
        return memory_call(service.revert, batch_id, actor=actor)


def changed_batches(report: BatchReport) -> list[str]:
    """The batch ids a report wrote (empty: the store did not change)."""
    if not (report.changed or report.cleanup_batch_id):
        return []
    return [b for b in (report.batch_id, report.cleanup_batch_id) if b]
