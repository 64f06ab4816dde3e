"""What to import ahead of need: one list for the warm server and the language server.

The warm server (`warm/server.py`) imports all of it before it forks workers, so a
one-shot turn starts with the stack in memory; the language server (`lsp/host.py`)
imports `LIGHT` with a project's data and `MEMORY` then `STACK` in the background, so
`Session.open()` finds them in `sys.modules`. The names were measured with
`-X importtime`. A name that no longer imports is a bug in this list: each server logs it
as an error and goes on (the module's user imports whatever replaced it itself, at the
cost of responsiveness only), and `tests/unit/test_preload.py` fails on it.

Standard library only: the language server imports this before anything heavy.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable

log = logging.getLogger("invincat.preload")

LIGHT = (
    # The thread list, history and pending approvals (the language server's step 2).
    "invincat_server.runtime.project",
    "invincat_server.runtime.project_data",
    "invincat_server.runtime.records",
    "invincat_server.runtime.checkpoint_reader",
    "invincat_server.runtime.history",
    "invincat_server.runtime.errors",
    "invincat_server.runtime.tools.edits",  # approvals' previews (lsp/proposals.py)
    "ormsgpack",
)

MEMORY = (
    # The memory service and its views: pydantic models, a few hundred ms on a busy
    # machine. Memory reads use the quick reader (runtime/memory/reader.py) and never
    # wait for these.
    "invincat_server.runtime.memory",
    "invincat_server.runtime.memory.service",
    "invincat_server.runtime.memory.views",
)

STACK = (
    # What `Session.open()` and a turn import.
    "aiosqlite",
    "langchain_openai",
    "langgraph.checkpoint.sqlite.aio",
    "openai.resources.chat.completions.completions",
    "httpcore2",
    "anyio._core._sockets",
    "anyio._core._streams",
    "detect_secrets.core.secrets_collection",
    "invincat_server.runtime.session",
    "invincat_server.runtime.agent_stack",
    "invincat_server.runtime.models",
    "invincat_server.runtime.history",
    "invincat_server.runtime.tools",
    "invincat_server.runtime.tools.files",
    "invincat_server.runtime.tools.search",
    "invincat_server.runtime.tools.shell",
    "invincat_server.runtime.tools.memory_search",
    "invincat_server.runtime.tools.web",
    "invincat_server.runtime.agents.approval_middleware",
    "invincat_server.runtime.agents.interaction",
    "invincat_server.runtime.agents.main_agent",
    "invincat_server.runtime.agents.planner",
    "invincat_server.runtime.agents.memory_guard",
    "invincat_server.runtime.agents.memory_injection",
    "invincat_server.runtime.instructions",
    "invincat_server.runtime.context.middleware",
    "invincat_server.runtime.extensions.registry",
    "invincat_server.runtime.extensions.mcp",
    "invincat_server.runtime.extensions.skills",
    "invincat_server.runtime.extensions.subagents",
    "invincat_server.runtime.extensions.remote_subagents",
    "invincat_server.runtime.extensions.web_fetch",
    "invincat_server.runtime.memory_agent.runner",
    "invincat_server.runtime.memory_agent.config",
    "invincat_server.runtime.memory.recall",
    "invincat_server.runtime.plan_flow",
)

EVERYTHING = LIGHT + MEMORY + STACK


def preload(names: tuple[str, ...], before_each: Callable[[], object] | None = None) -> list[str]:
    """Import `names` in order (calling `before_each` first, each time); the names that
    failed to import, each logged as an error with its reason."""
    failed = []
    for name in names:
        if before_each is not None:
            before_each()
        try:
            importlib.import_module(name)
        except Exception:  # any failure costs this module only; the list is fixed by tests
            log.error("could not preload %s", name, exc_info=True)
            failed.append(name)
    return failed
