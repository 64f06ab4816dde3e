"""`search_memory`: read-only lexical recall over governed memory.

The injection caps (8 hot + 6 warm entries and 4,000 characters per scope) leave entries
out of the system prompt; this lets the agent look them up, archived ones included. It
goes through `MemoryService` (never the store files), returns only redacted text, and
cannot change anything: memory changes stay with governance.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field

from invincat_server.runtime.tools.files import make_tool

NAME = "search_memory"
MAX_RESULTS = 20


class SearchMemoryArgs(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="words to look for")
    scope: Literal["user", "project"] | None = Field(
        default=None, description="only this scope; omit for both"
    )
    include_archived: bool = Field(default=True, description="also search archived entries")
    limit: int = Field(default=8, ge=1, le=MAX_RESULTS, description="at most this many results")


def build_search_memory_tool(memory: Any) -> BaseTool:
    """`memory` is the session's MemoryService."""
    from invincat_server.runtime.memory import MemoryStoreError
    from invincat_server.runtime.memory.recall import describe, rank
    from invincat_server.runtime.memory.redaction import redact_text

    def search(query: str, scope: str | None, include_archived: bool, limit: int) -> str:
        entries = memory.list(scope, include_archived=include_archived)
        hits = rank(entries, query, limit)
        if not hits:
            return f"No memory entry matches {query!r}."
        notes = {}
        for hit in hits:
            verdict = memory.check_entry(hit.entry)
            note = verdict.note() if verdict is not None else None
            if note:
                notes[hit.entry.id] = note
        # Entries are redacted when written; redact again so a hand-edited store cannot
        # hand the model a secret through this tool.
        return redact_text(describe(hits, notes))

    async def search_memory(
        query: str, scope: str | None = None, include_archived: bool = True, limit: int = 8
    ) -> str:
        try:
            return await asyncio.to_thread(search, query, scope, include_archived, limit)
        except MemoryStoreError as exc:
            raise ToolException(str(exc)) from exc

    return make_tool(
        NAME,
        "Search long-term memory (user preferences, project conventions), including entries "
        "not shown in the system prompt and archived ones. Lexical: pass the words the fact "
        "would contain. Read-only; results show id, scope/section, tier or archived, and a "
        "'may be stale' note when the evidence it cites changed.",
        SearchMemoryArgs,
        search_memory,
    )
