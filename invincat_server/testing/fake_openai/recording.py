"""The request log: what clients sent and which step answered, for test assertions."""

from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass, field
from typing import Any

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
RESPONSES_PATHS = frozenset({"/v1/responses", "/responses"})


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    index: int
    """Position in the log, from 0."""
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased header names."""
    body: Any
    """Parsed JSON body (usually a dict); None when empty, the raw text when not JSON."""
    step: dict[str, Any] | None
    """The scenario step that answered, None when none did (exhausted, non-chat paths)."""
    outcome: str
    """`ok`, `exhausted`, `fault:<name>`, `models`, `bad_request` or `not_found`."""
    timestamp: float = field(default_factory=time.time)

    @property
    def is_chat(self) -> bool:
        return self.path in CHAT_PATHS

    @property
    def is_responses(self) -> bool:
        return self.path in RESPONSES_PATHS

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "method": self.method,
            "path": self.path,
            "headers": dict(self.headers),
            "body": self.body,
            "step": self.step,
            "outcome": self.outcome,
            "timestamp": self.timestamp,
        }


class RequestLog:
    """Thread-safe, append-only (until cleared) list of RecordedRequest."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._items: list[RecordedRequest] = []

    def record(
        self,
        *,
        method: str,
        path: str,
        headers: dict[str, str],
        body: Any,
        step: dict[str, Any] | None,
        outcome: str,
    ) -> RecordedRequest:
        with self._cond:
            item = RecordedRequest(
                index=len(self._items),
                method=method,
                path=path,
                headers=dict(headers),
                body=copy.deepcopy(body),
                step=copy.deepcopy(step),
                outcome=outcome,
            )
            self._items.append(item)
            self._cond.notify_all()
            return item

    def snapshot(self) -> list[RecordedRequest]:
        # Deep copies so a test poking at `.body` cannot corrupt what later asserts see.
        with self._cond:
            return copy.deepcopy(self._items)

    def clear(self) -> None:
        with self._cond:
            self._items.clear()

    def wait_for(self, count: int, timeout: float) -> list[RecordedRequest]:
        """Block until at least `count` requests were recorded; TimeoutError otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._items) >= count, timeout=timeout):
                raise TimeoutError(
                    f"fake-openai: expected {count} requests within {timeout}s, "
                    f"got {len(self._items)}"
                )
            return copy.deepcopy(self._items)
