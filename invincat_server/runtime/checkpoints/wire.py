"""A rewind's turns, plan and outcome as JSON objects, one form for every front end.

They are the objects `invincat rewind --json` prints (docs/protocol.md, "Rewind
events") without their `type`; the language server answers `invincat/checkpoints/*`
with them, adding for each file whether its editor buffer takes the change
(`in_editor`, runtime/checkpoints/open_files.py).
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from invincat_server.runtime.checkpoints.planning import RewindPlan
from invincat_server.runtime.checkpoints.restore import RestoreResult
from invincat_server.runtime.checkpoints.rewind import ThreadCheckpoints


def turns_json(found: ThreadCheckpoints) -> dict[str, Any]:
    return {
        "thread_id": found.thread_id,
        "turns": [turn.to_json() for turn in found.turns],
        "rewinds": found.rewinds,
        "problems": found.problems,
    }


def plan_json(
    plan: RewindPlan | None,
    *,
    thread_id: str,
    to_turn: int | None,
    scope: str,
    in_editor: Container[str] = (),
) -> dict[str, Any]:
    """`plan` None: a conversation-only rewind (no file changes)."""
    files = plan.files if plan is not None else []
    return {
        "thread_id": thread_id,
        "to_turn": to_turn,
        "undo": to_turn is None,
        "scope": scope,
        "files": [{**entry.to_json(), "in_editor": entry.path in in_editor} for entry in files],
        "conflicts": plan.conflicts if plan is not None else [],
        "problems": plan.problems if plan is not None else [],
    }


def done_json(result: RestoreResult | None, removed: int | None) -> dict[str, Any]:
    """`result` None: the files were not part of it; `removed` None: nor the conversation."""
    return {
        "restored": result.restored if result else [],
        "skipped": result.skipped if result else [],
        "failed": result.failed if result else {},
        "checkpoint": result.checkpoint if result else None,
        "conversation_removed": removed,
    }
