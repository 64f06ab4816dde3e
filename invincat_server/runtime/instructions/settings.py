"""`[instructions]` in `$INVINCAT_HOME/config.toml`: which instruction files are read and
how much of them reaches the model.

Only the user's file counts: a repository's `.invincat/config.toml` cannot make Invincat
read more of the repository into the prompt (nor less: the team's files are the point).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from invincat_server.runtime.config import ConfigError

AGENTS_MD = "AGENTS.md"
CLAUDE_MD = "CLAUDE.md"
COPILOT_MD = ".github/copilot-instructions.md"
GEMINI_MD = "GEMINI.md"
CURSOR_RULES = ".cursor/rules"
"""A folder: each `.cursor/rules/NAME.mdc` in it is a file of its own (cursor_rules.py)."""
CURSORRULES = ".cursorrules"
"""Cursor's older single rules file."""

KINDS = (AGENTS_MD, CLAUDE_MD, COPILOT_MD, GEMINI_MD, CURSOR_RULES, CURSORRULES)
"""Every kind of instruction file Invincat knows, in the default reading order."""
NESTED = frozenset({AGENTS_MD, CLAUDE_MD, GEMINI_MD})
"""Kinds read at every level from the project root down to the working folder (as
Codex, Claude Code and Gemini CLI do); the others only at the root (Cursor reads its
rules from the root's `.cursor/rules`)."""

DEFAULT_MAX_BYTES = 32 * 1024
MAX_BYTES_LIMIT = 1024 * 1024
"""No configured cap above 1 MiB: the files are prompt text on every model call."""


@dataclass(frozen=True)
class InstructionSettings:
    files: tuple[str, ...] = KINDS
    """The kinds read, in this order (`[instructions] files`); empty reads none."""
    max_bytes: int = DEFAULT_MAX_BYTES
    """Bytes of the files' text shown in total (`[instructions] max_bytes`)."""


def load_instruction_settings(home: Path) -> InstructionSettings:
    """`[instructions]` of `$INVINCAT_HOME/config.toml`, else the defaults; a bad value is
    a ConfigError naming the key and what it may be."""
    path = home / "config.toml"
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return InstructionSettings()
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"Cannot read {path}: {exc}. Fix or remove the file.") from exc
    table = data.get("instructions", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [instructions] must be a table (files = [...], max_bytes = N).")
    unknown = sorted(set(table) - {"files", "max_bytes"})
    if unknown:
        raise ConfigError(
            f"{path}: [instructions] has no key {unknown[0]!r}; it takes files and max_bytes."
        )
    return InstructionSettings(
        files=_files(table.get("files", list(KINDS)), path),
        max_bytes=_max_bytes(table.get("max_bytes", DEFAULT_MAX_BYTES), path),
    )


def _files(raw: object, path: Path) -> tuple[str, ...]:
    choices = ", ".join(f'"{kind}"' for kind in KINDS)
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ConfigError(f"{path}: [instructions] files must be a list of {choices}; got {raw!r}.")
    for item in raw:
        if item not in KINDS:
            raise ConfigError(f"{path}: [instructions] files: {item!r} is not one of {choices}.")
    return tuple(dict.fromkeys(raw))


def _max_bytes(raw: object, path: Path) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= MAX_BYTES_LIMIT:
        raise ConfigError(
            f"{path}: [instructions] max_bytes must be an integer from 0 to {MAX_BYTES_LIMIT}; "
            f"got {raw!r}."
        )
    return raw
