"""The model's view of a long thread: summary of what was cut, then recent messages.

The checkpoint keeps every message. A compaction only records a cut point (the id of the
first message still sent verbatim) and a summary of everything before it, in the
`compaction` state key; `visible_messages` applies it to build each model request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NotRequired

from langchain.agents.middleware import AgentState
from langchain_core.messages import AnyMessage, HumanMessage

SUMMARY_HEADER = "[Summary of the earlier conversation, which was compacted]"


class ContextState(AgentState):
    compaction: NotRequired[dict[str, Any] | None]


def visible_messages(
    messages: Sequence[AnyMessage], compaction: dict[str, Any] | None
) -> list[AnyMessage]:
    """Messages the model should see given the recorded compaction (if any)."""
    if not compaction or not compaction.get("cut_id"):
        return list(messages)
    ids = [m.id for m in messages]
    if compaction["cut_id"] not in ids:
        return list(messages)  # history rewritten since: safer to send everything
    cut = ids.index(compaction["cut_id"])
    summary = HumanMessage(
        content=f"{SUMMARY_HEADER}\n{compaction.get('summary', '')}",
        id="invincat-compaction-summary",
    )
    return [summary, *messages[cut:]]


def cut_index(messages: Sequence[AnyMessage], keep_tokens: int, estimate: Any) -> int | None:
    """Index of the earliest user message such that the messages from it on fit in
    `keep_tokens`; always keeps at least the latest user message. None if nothing to cut."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    if not starts:
        return None
    chosen = starts[-1]
    for index in reversed(starts):
        if estimate(messages[index:]) > keep_tokens:
            break
        chosen = index
    return chosen if chosen > 0 else None
