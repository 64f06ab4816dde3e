"""The conversation part of a rewind: the thread forgets its turns from N on.

Invincat keeps only each thread's latest LangGraph checkpoint (runtime/records.py prunes
the older ones after every turn), so "resuming from the checkpoint before turn N" is not
possible. The thread is truncated instead: a new checkpoint is written whose messages
stop right before turn N's user message (LangGraph's `RemoveMessage` through the
`add_messages` reducer), so the model never sees the undone turns again and the thread
keeps its id, title and approvals. The undone messages are not kept (docs/rewind.md).
"""

from __future__ import annotations

from typing import Any

from invincat_server.runtime.errors import SessionError


def human_positions(messages: list[Any]) -> list[int]:
    return [i for i, m in enumerate(messages) if getattr(m, "type", None) == "human"]


async def truncate(graph: Any, config: dict[str, Any], to_turn: int) -> int:
    """Drop turn `to_turn` (1 = the first) and every later message; how many went."""
    from langchain_core.messages import RemoveMessage

    state = await graph.aget_state(config)
    messages = list(state.values.get("messages", []))
    starts = human_positions(messages)
    if not 1 <= to_turn <= len(starts):
        raise SessionError(
            f"The thread has {len(starts)} turn(s); choose a turn from 1 to {len(starts)}."
        )
    undone = messages[starts[to_turn - 1] :]
    removal = {"messages": [RemoveMessage(id=m.id) for m in undone if m.id]}
    try:
        await graph.aupdate_state(config, removal)
    except Exception as exc:  # InvalidUpdateError: LangGraph could not tell the last node
        if type(exc).__name__ != "InvalidUpdateError":
            raise
        await graph.aupdate_state(config, removal, as_node="model")
    return len(undone)
