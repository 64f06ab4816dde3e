"""Puts the project's instruction files, then governed memory (hot, then warm entries),
into the main agent's system prompt.

Rendered before every model call; each renderer re-reads its files only when they changed,
so new memory written by the memory agent, or an AGENTS.md edited or pulled mid-session,
reaches the very next model call, and an unchanged set costs a `stat` per file.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage

log = logging.getLogger("invincat.memory_injection")


class MemoryInjectionMiddleware(AgentMiddleware):
    skipped = "memory injection skipped: the stores could not be rendered"
    """What is logged when `render` fails (the CLI and the views report the cause)."""

    def __init__(self, render: Callable[[], str]) -> None:
        super().__init__()
        self.render = render

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        try:
            block = self.render()
        except Exception:  # an unreadable store must not stop the agent
            log.warning(self.skipped, exc_info=True)
            block = ""
        if not block:
            return await handler(request)
        base: Any = request.system_prompt or ""
        message = SystemMessage(content=f"{base}\n\n{block}".strip())
        return await handler(request.override(system_message=message))


class InstructionsInjectionMiddleware(MemoryInjectionMiddleware):
    """The instruction files' block (runtime/instructions/render.py). Placed before
    MemoryInjectionMiddleware: the outer middleware appends first, so the files come
    ahead of governed memory in the prompt. Its own class: LangChain names a middleware
    by its class, and two of one name are refused."""

    skipped = "instruction files skipped: they could not be rendered"
