"""The session modes, offered both ways the schema knows: `modes` (`session/set_mode`,
for older clients) and a `mode` select in `configOptions` (`session/set_config_option`,
the form the spec now prefers; codecompanion shows a mode selector only for it). Both set
the same value and both updates are sent whichever way it changed, so a client of either
kind stays in step."""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import (
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

MODES = {
    "agent": "Agent: works on the task, asking before it writes, runs or fetches anything.",
    "plan": "Plan: a read-only planner proposes a todo list for you to approve first.",
}
MODE_OPTION = "mode"
"""The id of the mode's config option."""
INVALID_PARAMS = -32602


def mode_state(mode: str) -> SessionModeState:
    return SessionModeState(
        current_mode_id=mode,
        available_modes=[
            SessionMode(id=name, name=name.capitalize(), description=description)
            for name, description in MODES.items()
        ],
    )


def config_options(mode: str) -> list[Any]:
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODE_OPTION,
            name="Mode",
            category="mode",
            description="How Invincat works on your next prompts.",
            current_value=mode,
            options=[
                SessionConfigSelectOption(
                    value=name, name=name.capitalize(), description=description
                )
                for name, description in MODES.items()
            ],
        )
    ]


def checked_mode(mode_id: Any) -> str:
    """`mode_id` if it names a mode; a -32602 error saying which ones exist otherwise."""
    if not isinstance(mode_id, str) or mode_id not in MODES:
        shown = repr(mode_id) if isinstance(mode_id, str | bool | int | float) else "that"
        raise RequestError(
            INVALID_PARAMS, f"Unknown mode {shown[:80]}; use one of: {', '.join(MODES)}."
        )
    return mode_id


def checked_option(config_id: Any) -> None:
    if config_id != MODE_OPTION:
        shown = repr(config_id)[:80] if isinstance(config_id, str) else "that"
        raise RequestError(
            INVALID_PARAMS, f"Unknown config option {shown}; the one option is {MODE_OPTION!r}."
        )


def mode_updates(mode: str) -> list[Any]:
    """What tells clients of either kind that the mode is now `mode`."""
    return [
        CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode),
        ConfigOptionUpdate(
            session_update="config_option_update", config_options=config_options(mode)
        ),
    ]
