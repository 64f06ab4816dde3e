"""Seeing the model client's retries, for the live status line.

The core emits no event for retries: the OpenAI SDK retries 429 and 5xx itself and only
logs it ("Retrying request in 0.8 seconds (retry 1 of 2)", after httpx's "HTTP Request: ...
500 Internal Server Error"). Without this, a turn whose requests fail and are retried sits
silent for tens of seconds. The handler only records the latest status and retry count;
it prints nothing, and nothing logged here leaves the process.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

_STATUS = re.compile(r'"HTTP/[\d.]+ (\d{3}) ?([^"]*)"')  # httpx, with the reason phrase
# openai (debug): "Encountered an HTTP status error: 500" / "Retrying due to status code 500"
_SDK_STATUS = re.compile(r"(?:HTTP status error:|due to status code) (\d{3})")
_SDK_EXCEPTION = re.compile(r"Encountered (?:a timeout exception|exception): (\w+)")
# openai 2.x: "Retrying request in 0.4 seconds (retry 1 of 2)"; 1.x: "... to /path in ...".
_RETRYING = re.compile(
    r"Retrying request(?: to \S+)? in ([\d.]+) seconds(?: \(retry (\d+) of (\d+)\))?"
)
WATCHED = ("openai._base_client", "httpx")


@dataclass
class RetryState:
    count: int = 0
    of: int | None = None
    why: str = ""
    wait: float = 0.0
    at: float = 0.0


def retry_notice(state: RetryState, where: str, timeout: float) -> str:
    """One line saying why the model request is retried, for the first retry of a turn:
    without it a server that never answers costs minutes of silence (3 x the timeout)."""
    of = f" of {state.of + 1}" if state.of else ""
    attempt = f"Invincat retries (attempt {state.count + 1}{of})"
    if state.why.endswith("Timeout"):
        return f"the model server at {where} is slow: no answer within {timeout:g}s; {attempt}."
    if state.why.startswith("HTTP "):
        return f"the model server at {where} answered {state.why}; {attempt} in {state.wait:.1f}s."
    return f"the request to the model server at {where} failed ({state.why}); {attempt}."


class RetryWatch(logging.Handler):
    def __init__(self, on_retry: Callable[[RetryState], None] | None = None) -> None:
        super().__init__(logging.DEBUG)
        self.state = RetryState()
        self._last_failure = ""
        self.on_retry = on_retry  # called (on the requesting thread) at each retry

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record must never break a turn
            return
        status = _STATUS.search(message)
        if status and int(status.group(1)) >= 400:
            self._last_failure = f"HTTP {status.group(1)} {status.group(2)}".strip()
        sdk_status = _SDK_STATUS.search(message)
        if sdk_status and not self._last_failure.startswith(f"HTTP {sdk_status.group(1)}"):
            self._last_failure = f"HTTP {sdk_status.group(1)}"
        exception = _SDK_EXCEPTION.search(message)
        if exception:
            self._last_failure = exception.group(1)
        retrying = _RETRYING.search(message)
        if retrying:
            self.state = RetryState(
                count=self.state.count + 1,
                of=int(retrying.group(3)) if retrying.group(3) else None,
                why=self._last_failure or "request failed",
                wait=float(retrying.group(1)),
                at=time.monotonic(),
            )
            if self.on_retry is not None:
                try:
                    self.on_retry(self.state)
                except Exception:  # a notice must never break the request being retried
                    return

    def reset(self) -> None:
        """A new turn: earlier retries are not news."""
        self.state = RetryState()
        self._last_failure = ""

    def describe(self) -> str:
        if not self.state.count:
            return ""
        of = f" of {self.state.of}" if self.state.of else ""
        return f"retry {self.state.count}{of} ({self.state.why})"

    def install(self) -> None:
        for name in WATCHED:
            logger = logging.getLogger(name)
            logger.addHandler(self)
            # The SDK says why it retries only at debug level. Records are matched here and
            # dropped (no other handler is added), so nothing more is printed or kept.
            if logger.getEffectiveLevel() > logging.DEBUG:
                logger.setLevel(logging.DEBUG)

    def uninstall(self) -> None:
        for name in WATCHED:
            logging.getLogger(name).removeHandler(self)
