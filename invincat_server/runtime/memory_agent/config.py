"""Memory agent settings: `[memory]` in `$INVINCAT_HOME/config.toml`, overridden by the
project's `.invincat/config.toml` (a team can turn extraction off for one repository),
overridden by `INVINCAT_MEMORY_EXTRACTION`."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from invincat_server.runtime.config import ConfigError
from invincat_server.runtime.memory_agent.runner import MemoryAgentConfig


def _memory_table(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as fh:
            table = tomllib.load(fh).get("memory", {})
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"Cannot read {path}: {exc}. Fix or remove the file.") from exc
    return table if isinstance(table, dict) else {}


def _bool(value: object, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{where} must be true or false, got {value!r}.")


def load_memory_agent_config(
    home: Path, project_root: Path, env: Mapping[str, str] | None = None
) -> MemoryAgentConfig:
    env = os.environ if env is None else env
    merged = {
        **_memory_table(home / "config.toml"),
        **_memory_table(project_root / ".invincat" / "config.toml"),
    }
    config = MemoryAgentConfig()
    if "extraction" in merged:
        config.enabled = _bool(merged["extraction"], "[memory] extraction")
    if env.get("INVINCAT_MEMORY_EXTRACTION"):
        config.enabled = _bool(env["INVINCAT_MEMORY_EXTRACTION"], "INVINCAT_MEMORY_EXTRACTION")
    try:
        if "min_seconds_between_runs" in merged:
            config.min_seconds_between_runs = float(merged["min_seconds_between_runs"])
        if "min_turn_interval" in merged:
            config.min_turn_interval = max(1, int(merged["min_turn_interval"]))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"[memory] throttles must be numbers: {exc}") from exc
    return config
