"""One Project per project root, for every front end (see project.py).

Names load lazily (PEP 562): the language server imports `limits` at start-up, which must
not bring the project's data readers with it; nothing here loads LangChain, pydantic's
memory models or the OpenAI SDK until a Session or the full memory service is asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from invincat_server.runtime.project.limits import MAX_PROMPT_CHARS, prompt_problem
    from invincat_server.runtime.project.listeners import Listeners
    from invincat_server.runtime.project.memory_views import (
        MemoryViewError,
        MemoryViews,
        changed_batches,
    )
    from invincat_server.runtime.project.project import (
        MemoryChange,
        Project,
        SessionOptions,
        TurnEvent,
    )
    from invincat_server.runtime.project.registry import Projects
    from invincat_server.runtime.project.root import project_root

_WHERE = {
    "MAX_PROMPT_CHARS": "limits",
    "prompt_problem": "limits",
    "Listeners": "listeners",
    "MemoryViewError": "memory_views",
    "MemoryViews": "memory_views",
    "changed_batches": "memory_views",
    "MemoryChange": "project",
    "Project": "project",
    "SessionOptions": "project",
    "TurnEvent": "project",
    "Projects": "registry",
    "project_root": "root",
}

__all__ = [
    "MAX_PROMPT_CHARS",
    "Listeners",
    "MemoryChange",
    "MemoryViewError",
    "MemoryViews",
    "Project",
    "Projects",
    "SessionOptions",
    "TurnEvent",
    "changed_batches",
    "project_root",
    "prompt_problem",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value
