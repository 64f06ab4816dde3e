"""Puts governed memory (hot, then warm entries) into the main agent's system prompt.

Rendered before every model call; the renderer re-reads a store only when its file changed,
so new memory written by the memory agent reaches the very next model call, and an
unchanged store costs a `stat`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage

log = logging.getLogger("invincat.memory_injection")


class MemoryInjectionMiddleware(AgentMiddleware):
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
        except Exception:  # an unreadable store must not stop the agent; the CLI reports it
            log.warning("memory injection skipped: the stores could not be rendered", exc_info=True)
            block = ""
        if not block:
            return await handler(request)
        base: Any = request.system_prompt or ""
        message = SystemMessage(content=f"{base}\n\n{block}".strip())
        return await handler(request.override(system_message=message))
