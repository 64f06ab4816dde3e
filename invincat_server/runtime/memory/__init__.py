"""Governed long-term memory: stores, the governance pipeline, injection, protection.

Spec: docs/memory.md. The public surface is small; everything else is an implementation
detail of one of the modules below. This package must stay cheap to import (no
LangChain): the CLI and crash tests start it in fresh processes many times.
"""

from invincat_server.runtime.memory.errors import (
    BatchShapeError,
    LockTimeoutError,
    MemoryConfigError,
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

__all__ = [
    "BatchReport",
    "BatchShapeError",
    "Entry",
    "Fingerprint",
    "JournalRecord",
    "LockTimeoutError",
    "MemoryConfigError",
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
