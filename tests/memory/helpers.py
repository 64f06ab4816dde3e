"""Batch builders and file readers shared by the memory tests."""

from __future__ import annotations

import itertools
import secrets
from typing import Any

from invincat_server.runtime.memory import MemoryService

_words = itertools.count()


def distinct_fact(prefix: str = "fact") -> str:
    """Content no other call shares enough tokens with to count as a near-duplicate."""
    n = next(_words)
    return f"{prefix} {n} {secrets.token_hex(4)} {secrets.token_hex(4)} about q{n}x"


def create(scope: str = "project", content: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "op": "create",
        "scope": scope,
        "section": fields.pop("section", "Testing"),
        "content": content if content is not None else distinct_fact(),
        **fields,
    }


def store_bytes(service: MemoryService, scope: str = "project") -> bytes:
    return service.store_paths()[scope].read_bytes()


def journal_bytes(service: MemoryService, scope: str = "project") -> bytes:
    return service.files[scope].journal.read_bytes()  # type: ignore[index]
