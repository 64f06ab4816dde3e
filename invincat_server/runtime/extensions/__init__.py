"""Extension points (MCP servers, skills, subagents, web fetch) loaded into a session.

Each provider in `registry.PROVIDERS` gets an `ExtensionContext` and adds tools, system
prompt sections, middleware and cleanup callbacks to `Extensions`. A provider that fails
is reported through `ctx.notify` and skipped: one broken extension never stops a session.
Every tool added here goes through the same approval policy and guards as built-in tools
(they are ordinary tools of the agent; the approval middleware sees all tool calls).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models import BaseChatModel
    from langchain_core.tools import BaseTool

    from invincat_server.runtime.approvals import ApprovalPolicy
    from invincat_server.runtime.config import Settings
    from invincat_server.runtime.policy.workspace import Workspace
    from invincat_server.runtime.tools.documents import DocumentSource

log = logging.getLogger("invincat.extensions")


@dataclass
class ExtensionContext:
    """What a provider may use to build its tools."""

    settings: Settings
    workspace: Workspace
    policy: ApprovalPolicy
    model: BaseChatModel
    core_tools: list[BaseTool]
    documents: DocumentSource
    notify: Callable[[str], None]
    """Report a problem to the user (an `error` event); the session goes on."""
    tool_guards: list[AgentMiddleware] = field(default_factory=list)
    """Middleware every agent that runs tools must include (the memory guard); subagents
    add it to their own stacks."""
    answer_readers: list[AgentMiddleware] = field(default_factory=list)
    """Middleware every agent lists last, wrapping its model call innermost: the reader of
    tool calls written as text while `text_tool_calls` is `auto` (subagents too: without
    it a small model's first call, written as text, ended its run as its report)."""
    options: dict[str, Any] = field(default_factory=dict)
    """Front-end options, e.g. `trust_project` (run project MCP configs) and
    `allow_loopback_fetch` (tests)."""


@dataclass
class Extensions:
    tools: list[BaseTool] = field(default_factory=list)
    prompt_sections: list[str] = field(default_factory=list)
    middleware: list[AgentMiddleware] = field(default_factory=list)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    async def aclose(self) -> None:
        for close in reversed(self.closers):
            try:
                await close()
            except Exception:  # cleanup of one extension must not block the others
                log.exception("extension cleanup failed")


Provider = Callable[[ExtensionContext, Extensions], Awaitable[None]]


async def load_extensions(ctx: ExtensionContext) -> Extensions:
    from invincat_server.runtime.extensions.registry import PROVIDERS

    loaded = Extensions()
    for provider in PROVIDERS:
        try:
            await provider(ctx, loaded)
        except Exception as exc:  # a broken extension is reported, never fatal
            log.exception("extension provider %s failed", getattr(provider, "__name__", provider))
            ctx.notify(f"Extension {getattr(provider, '__name__', provider)} failed to load: {exc}")
    return loaded
