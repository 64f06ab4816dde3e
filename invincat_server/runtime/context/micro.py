"""Micro-compaction: old bulky tool outputs stop costing tokens on every call.

Rule-based, no model call, deterministic (the same history always compacts to the same
text, which keeps provider prompt caches warm). Applied to the messages actually sent to
the model; the checkpoint keeps the full outputs for the user and for offload.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from invincat_server.runtime.memory.redaction import cut_whole_tokens

# Tools whose output can be reproduced by running them again; writes are never compacted
# (their results are short and say what changed).
COMPACTABLE_TOOLS = frozenset({"read_file", "grep", "glob", "ls", "execute", "web_fetch"})
MIN_CHARS = 1_200
HEAD_LINES = 5
PLACEHOLDER_MARK = "[compacted tool output]"


def recent_groups_to_keep(total_groups: int) -> int:
    """At least 3 recent tool-call groups stay verbatim, one more per 10 groups so far."""
    return 3 + total_groups // 10


def _arg_summary(args: dict[str, Any]) -> str:
    for key in ("path", "pattern", "command", "url"):
        if key in args:
            return f"{key}={cut_whole_tokens(json.dumps(args[key], ensure_ascii=False), 160)}"
    return cut_whole_tokens(json.dumps(args, ensure_ascii=False), 160)


def placeholder(tool: str, args: dict[str, Any], content: str) -> str:
    lines = content.splitlines()
    # Cut between tokens, never through one: the main model sees its own conversation
    # unredacted, but half a secret it echoed would escape every later redaction.
    head = "\n".join(cut_whole_tokens(line, 200) for line in lines[:HEAD_LINES])
    return (
        f"{PLACEHOLDER_MARK} {tool}({_arg_summary(args)}) returned {len(lines)} lines "
        f"({len(content)} chars); older output is elided to save context. Head:\n{head}\n"
        f"… Run {tool} again with the same arguments if you need the full output."
    )


def micro_compact(
    messages: Sequence[AnyMessage], *, min_chars: int = MIN_CHARS
) -> list[AnyMessage]:
    """Replace bulky outputs of older tool-call groups with placeholders."""
    groups = [i for i, m in enumerate(messages) if isinstance(m, AIMessage) and m.tool_calls]
    keep = recent_groups_to_keep(len(groups))
    if len(groups) <= keep:
        return list(messages)
    boundary = groups[-keep]  # messages from here on stay verbatim
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for message in messages[:boundary]:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                calls[call["id"] or ""] = (call["name"], dict(call["args"]))
    out: list[AnyMessage] = []
    for index, message in enumerate(messages):
        if index < boundary and isinstance(message, ToolMessage):
            name, args = calls.get(message.tool_call_id, (message.name or "", {}))
            content = message.content if isinstance(message.content, str) else message.text
            if name in COMPACTABLE_TOOLS and len(content) >= min_chars:
                message = message.model_copy(update={"content": placeholder(name, args, content)})
        out.append(message)
    return out
