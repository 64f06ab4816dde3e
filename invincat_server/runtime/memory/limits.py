"""Per-scope bounds and injection caps, with `[memory]` overrides from config.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from invincat_server.runtime.memory.errors import MemoryConfigError

MAX_OPS_PER_BATCH = 20


@dataclass(frozen=True)
class MemoryLimits:
    """Bounds per scope (spec sections 4.6 and 5)."""

    max_active: int = 200
    """Active entries per scope; beyond it the weakest cold entries are archived."""
    max_archived: int = 50
    """Archived entries per scope; beyond it the oldest archived entries are deleted."""
    inject_hot: int = 8
    """Hot entries injected per scope."""
    inject_warm: int = 6
    """Warm entries injected per scope."""
    inject_chars: int = 4_000
    """Characters of entry lines injected per scope (whole lines only)."""
    lock_timeout: float = 30.0
    """Seconds to wait for another process's write before giving up."""


_CONFIGURABLE = {"max_active": 1, "max_archived": 0}  # key -> smallest allowed value


def load_limits(home: Path) -> MemoryLimits:
    """Limits from `$INVINCAT_HOME/config.toml` `[memory]`, else the defaults."""
    path = home / "config.toml"
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return MemoryLimits()
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise MemoryConfigError(f"Cannot read {path}: {exc}. Fix or remove the file.") from exc
    section = data.get("memory", {})
    if not isinstance(section, dict):
        raise MemoryConfigError(f"{path}: [memory] must be a table.")
    values: dict[str, int] = {}
    for key, minimum in _CONFIGURABLE.items():
        if key not in section:
            continue
        raw = section[key]
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < minimum:
            raise MemoryConfigError(
                f"{path}: [memory] {key} must be an integer >= {minimum}, got {raw!r}."
            )
        values[key] = raw
    return MemoryLimits(**values)
