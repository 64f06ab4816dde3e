"""Governed long-term memory: stores, the governance pipeline, injection, protection.

Spec: docs/memory.md. The public surface is small; everything else is an implementation
detail of one of the modules below. This package must stay cheap to import (no
LangChain): the CLI and crash tests start it in fresh processes many times.

The names below are loaded on first use (PEP 562), not when the package is imported:
the quick read path (reader.py: `memory list|show|log`, the editors' memory views) is a
submodule of this package and must not pay for the pydantic models of the rest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from invincat_server.runtime.memory.errors import (
        BatchShapeError,
        LockTimeoutError,
        MemoryConfigError,
        MemoryDatabaseUnavailableError,
        MemoryStoreError,
        MergeConflictError,
        StoreUnavailableError,
        UnknownBatchError,
        UnknownEntryError,
    )
    from invincat_server.runtime.memory.limits import MemoryLimits, load_limits
    from invincat_server.runtime.memory.models import Entry, Scope
    from invincat_server.runtime.memory.protection import (
        PathGuard,
        command_touches_memory,
        is_protected,
        protected_paths,
    )
    from invincat_server.runtime.memory.report import BatchReport, JournalRecord
    from invincat_server.runtime.memory.service import MemoryService
    from invincat_server.runtime.memory.tamper import Fingerprint, TamperReport

_WHERE = {
    "BatchShapeError": "errors",
    "LockTimeoutError": "errors",
    "MemoryConfigError": "errors",
    "MemoryDatabaseUnavailableError": "errors",
    "MemoryStoreError": "errors",
    "MergeConflictError": "errors",
    "StoreUnavailableError": "errors",
    "UnknownBatchError": "errors",
    "UnknownEntryError": "errors",
    "MemoryLimits": "limits",
    "load_limits": "limits",
    "Entry": "models",
    "Scope": "models",
    "PathGuard": "protection",
    "command_touches_memory": "protection",
    "is_protected": "protection",
    "protected_paths": "protection",
    "BatchReport": "report",
    "JournalRecord": "report",
    "MemoryService": "service",
    "Fingerprint": "tamper",
    "TamperReport": "tamper",
}

__all__ = [
    "BatchReport",
    "BatchShapeError",
    "Entry",
    "Fingerprint",
    "JournalRecord",
    "LockTimeoutError",
    "MemoryConfigError",
    "MemoryDatabaseUnavailableError",
    "MemoryLimits",
    "MemoryService",
    "MemoryStoreError",
    "MergeConflictError",
    "PathGuard",
    "Scope",
    "StoreUnavailableError",
    "TamperReport",
    "UnknownBatchError",
    "UnknownEntryError",
    "command_touches_memory",
    "is_protected",
    "load_limits",
    "protected_paths",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value
