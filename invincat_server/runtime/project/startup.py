"""A project's start-up as a front end reports it: `starting`, then `ready` or `failed`.

Protocol-independent state only: the phase, why it failed (the one line the user is
shown, and every request needing the session answers with), and how long its steps
took. Whoever opens the project drives it (lsp/host.py: settings and ProjectData, the
stack import, the Session); the language server translates it to `invincat/status` and
`invincat/statusChanged` (lsp/projects.py). `combined` is the phase of several projects.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

Phase = Literal["starting", "ready", "failed"]

COULD_NOT_START = "Invincat could not start."


def failure_message(exc: BaseException) -> str:
    """What the user is told when opening failed with `exc`: a configuration problem, an
    unreachable `database_url` database or memory that cannot be opened (a bad [memory]
    option, the memory tables missing) in its own words (they name what to set, or the
    database redacted), anything else with its type."""
    from invincat_server.runtime.config import ConfigError
    from invincat_server.runtime.database import DatabaseUnavailableError
    from invincat_server.runtime.memory.errors import MemoryStoreError

    if isinstance(exc, ConfigError | DatabaseUnavailableError | MemoryStoreError):
        return str(exc)
    return f"Invincat could not start: {type(exc).__name__}: {exc}"


class Startup:
    """Where one project's start-up is. `changed` is called after each change of phase
    (not of timings: those are read with the phase)."""

    def __init__(self, changed: Callable[[], None] | None = None) -> None:
        self.phase: Phase = "starting"
        self.error: str | None = None
        """Why it failed (or the step that failed, before the phase says so)."""
        self.stack_import_seconds: float | None = None
        self.session_open_seconds: float | None = None
        """From the start of the opening to the session open (the stack import included)."""
        self._changed = changed
        self._began: float | None = None

    def begin(self) -> None:
        """The opening starts now: `session_open_seconds` counts from here."""
        if self._began is None:
            self._began = time.perf_counter()

    def step_failed(self, exc: BaseException) -> None:
        """A step failed with `exc`: remembered as the reason; `fail` then ends it."""
        self.error = failure_message(exc)

    def stack_imported(self, seconds: float) -> None:
        self.stack_import_seconds = seconds

    def ready(self) -> None:
        began = self._began if self._began is not None else time.perf_counter()
        self.session_open_seconds = time.perf_counter() - began
        self._set("ready")

    def fail(self) -> str:
        """The start-up failed; the message to tell the user (the reason a step gave)."""
        self._set("failed")
        return self.error or COULD_NOT_START

    @property
    def message(self) -> str | None:
        """Why it failed, for a `failed` project only."""
        return self.error if self.phase == "failed" else None

    def _set(self, phase: Phase) -> None:
        if phase != self.phase:
            self.phase = phase
            if self._changed is not None:
                self._changed()


def combined(phases: list[Phase], *, begun: bool = True) -> Phase:
    """Several projects as one: `failed` if any failed, else `starting` while any opens
    (or before any could begin), else `ready`."""
    if "failed" in phases:
        return "failed"
    if "starting" in phases or not begun:
        return "starting"
    return "ready"
