"""One Project per project root, for every front end (see project.py).

Light to import: nothing here loads LangChain, pydantic's memory models or the OpenAI SDK
until a Session or the full memory service is asked for.
"""

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
from invincat_server.runtime.project.registry import Projects, project_root

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
