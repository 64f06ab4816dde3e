"""Runtime events and saved history as ACP `session/update` payloads (stable schema v1).

Every update is built as an SDK pydantic model, so a field that breaks the schema fails
here, loudly, instead of the client silently dropping the item (the user would not see a
diff). `plan_update` / `plan_removed` exist in the SDK but not in the stable schema: only
`plan` is sent.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntry,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    UserMessageChunk,
)

from invincat_server.runtime.tool_phrases import ToolKind, tool_kind

log = logging.getLogger("invincat.acp.updates")

RESULT_STATUS: dict[str, ToolCallStatus] = {
    "success": "completed",
    "error": "failed",
    "rejected": "failed",
}
OUTPUT_LIMIT = 4000
"""Characters of a tool's output shown in the client (the model gets all of it)."""


def text(value: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=value)


def agent_text(value: str) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=text(value))


def user_text(value: str) -> UserMessageChunk:
    return UserMessageChunk(session_update="user_message_chunk", content=text(value))


def tool_locations(root: Path, args: dict[str, Any]) -> list[ToolCallLocation] | None:
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return None
    # Absolute, as the schema requires; normalised without resolving symlinks (the
    # runtime does the confinement check when the tool runs).
    return [ToolCallLocation(path=os.path.normpath(os.path.join(root, path)))]


def diff_content(path: Path, old_text: str | None, new_text: str) -> FileEditToolCallContent:
    return FileEditToolCallContent(
        type="diff", path=str(path), old_text=old_text, new_text=new_text
    )


def tool_call_start(
    call_id: str,
    title: str,
    kind: ToolKind,
    args: dict[str, Any],
    root: Path,
    *,
    status: ToolCallStatus = "pending",
    content: list[Any] | None = None,
) -> ToolCallStart:
    """`title` and `kind`: the phrase book's, as the core worded the call (the event's
    `words`, a saved call's `summary`), never worded again here."""
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call_id,
        title=title,
        kind=kind,
        status=status,
        locations=tool_locations(root, args),
        content=content,
        raw_input=args,
    )


def tool_call_result(call_id: str, status: str, output: str) -> ToolCallProgress:
    shown = output if len(output) <= OUTPUT_LIMIT else output[:OUTPUT_LIMIT] + "\n…"
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=call_id,
        status=RESULT_STATUS.get(status, "completed"),
        content=[text_content(shown)] if shown else None,
        raw_output={"status": status, "content": output},
    )


def text_content(value: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=text(value))


def plan_text(todos: list[dict[str, Any]]) -> ContentToolCallContent:
    lines = [f"{i}. {item.get('content', '')}" for i, item in enumerate(todos, 1)]
    return text_content("\n".join(lines) or "(empty plan)")


def tool_call_progress(call_id: str, **fields: Any) -> ToolCallProgress:
    return ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, **fields)


def plan_update(items: list[dict[str, Any]]) -> AgentPlanUpdate:
    entries = []
    for item in items:
        status = item.get("status")
        entries.append(
            PlanEntry(
                content=str(item.get("content") or ""),
                priority="medium",
                status=status if status in ("pending", "in_progress", "completed") else "pending",
            )
        )
    return AgentPlanUpdate(session_update="plan", entries=entries)


CANCELLED_TEXT = "Cancelled before it ran."


def cancelled_call(call_id: str) -> ToolCallProgress:
    """A call whose turn ended before it ran (cancelled at its permission prompt): the
    schema has no `cancelled` status, and `failed` is what it was (it did not run)."""
    return tool_call_progress(call_id, status="failed", content=[text_content(CANCELLED_TEXT)])


def history_updates(
    messages: list[dict[str, Any]], root: Path, pending: set[str] | frozenset[str] = frozenset()
) -> list[Any]:
    """A saved thread as the updates a client replays after `session/load`, each tool call
    ending with the status the live session showed: its result's (`rejected` → failed),
    `pending` while its approval still waits (`pending`: the ids, asked again after the
    load), else `failed` as when it was cancelled before it ran."""
    updates: list[Any] = []
    unanswered: list[str] = []
    for message in messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "user" and content:
            updates.append(user_text(content))
        elif role == "assistant":
            if content:
                updates.append(agent_text(content))
            for call in message.get("tool_calls") or []:
                args = call.get("args") if isinstance(call.get("args"), dict) else {}
                status: ToolCallStatus = "pending" if call["id"] in pending else "in_progress"
                # The history worded the call (its `summary`, runtime/history.py); the kind
                # is the tool's, whatever its arguments.
                title = str(call.get("summary") or call["name"])
                kind = tool_kind(call["name"])
                updates.append(tool_call_start(call["id"], title, kind, args, root, status=status))
                unanswered.append(call["id"])
        elif role == "tool" and message.get("tool_call_id"):
            call_id = message["tool_call_id"]
            updates.append(tool_call_result(call_id, str(message.get("status")), content))
            if call_id in unanswered:
                unanswered.remove(call_id)
    updates += [cancelled_call(call_id) for call_id in unanswered if call_id not in pending]
    return updates
