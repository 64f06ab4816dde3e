"""The document source of the turn that is running: one Session serves several clients.

ACP shares one Session (one agent stack) between every ACP session of a project root, but
each ACP session reads and writes through its own client (`fs/*` requests carry that
session's id). So the tools are built with a `TurnDocuments` proxy, and each turn's task
runs with its own source set in a context variable (`asyncio.create_task(...,
context=...)` in runtime/turn_runner.py): the tools, the approval previews and the
LangGraph tasks they spawn all copy that context, so every read and write of a turn goes
to the client that asked for it, never to another session's.
"""

from __future__ import annotations

import contextvars
from pathlib import Path

from invincat_server.runtime.tools.documents import DocumentSource

_CURRENT: contextvars.ContextVar[DocumentSource | None] = contextvars.ContextVar(
    "invincat_turn_documents", default=None
)


class TurnDocuments:
    """A DocumentSource that forwards to the running turn's source, else to `default`
    (the Session's own: the language server's buffers, or the disk)."""

    def __init__(self, default: DocumentSource) -> None:
        self.default = default

    def current(self) -> DocumentSource:
        return _CURRENT.get() or self.default

    def read_text(self, path: Path) -> str | None:
        return self.current().read_text(path)

    async def write_text(self, path: Path, text: str) -> bool:
        return await self.current().write_text(path, text)


def context_with(documents: DocumentSource | None) -> contextvars.Context:
    """A copy of the current context in which `documents` is the turn's source (None:
    the Session's default)."""
    context = contextvars.copy_context()
    context.run(_CURRENT.set, documents)
    return context
