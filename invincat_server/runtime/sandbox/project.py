"""The sandbox setting of one session: the user's (environment, then
`$INVINCAT_HOME/config.toml`), then the project's `[sandbox]` table in
`.invincat/config.toml`.

A repository is untrusted input. What its setting *narrows* (a stricter mode, network
off) applies at once; what it *widens* (mode `off`, network on, `read-only` →
`workspace-write`) applies only when the user trusted this exact file, as a project MCP
config must be trusted: `--trust-project` records its sha256 in
`$INVINCAT_HOME/trusted_projects.json` and any later change asks again. Otherwise the
widening part is ignored and the user is told why, once per session.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from invincat_server.runtime.config import SANDBOX_MODES, Settings
from invincat_server.runtime.extensions.mcp.trust import TRUST_FILE, TrustStore
from invincat_server.runtime.sandbox.modes import SandboxSpec

__all__ = ["PROJECT_CONFIG", "resolve_spec"]

PROJECT_CONFIG = ".invincat/config.toml"
MAX_CONFIG_BYTES = 1_000_000


def _project_table(path: Path, notify: Callable[[str], None]) -> dict[str, Any]:
    """The project's `[sandbox]` table; {} (and a notice) when it cannot be read."""
    try:
        if not path.is_file():
            return {}
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ValueError(f"larger than {MAX_CONFIG_BYTES} bytes")
        table = tomllib.loads(data.decode("utf-8")).get("sandbox", {})
    except (OSError, ValueError) as exc:  # TOMLDecodeError and UnicodeError are ValueErrors
        notify(f"The sandbox settings in {PROJECT_CONFIG} were ignored: {exc}.")
        return {}
    if not isinstance(table, dict):
        notify(f"[sandbox] in {PROJECT_CONFIG} is not a table; it was ignored.")
        return {}
    return table


def _project_values(table: dict[str, Any], notify: Callable[[str], None]) -> dict[str, Any]:
    """The valid items of the table; each bad one is reported and skipped on its own."""
    values: dict[str, Any] = {}
    mode = table.get("mode")
    if mode is not None:
        if isinstance(mode, str) and mode.strip().lower() in SANDBOX_MODES:
            values["mode"] = mode.strip().lower()
        else:
            shown = repr(mode)[:80]
            notify(
                f"[sandbox] mode in {PROJECT_CONFIG} must be one of "
                f"{', '.join(SANDBOX_MODES)}, not {shown}; it was ignored."
            )
    network = table.get("network")
    if network is not None:
        if isinstance(network, bool):
            values["network"] = network
        else:
            notify(f"[sandbox] network in {PROJECT_CONFIG} must be true or false; it was ignored.")
    return values


def _trusted(settings: Settings, root: Path, path: Path, trust_project: bool) -> bool:
    """This exact file was trusted (now, by `--trust-project`, or earlier)."""
    store = TrustStore(settings.home / TRUST_FILE)
    # Keyed by the project's `.invincat` folder, beside the project root's MCP entry.
    folder = path.parent
    if trust_project:
        store.trust(folder, [path])
        return True
    return store.is_trusted(folder, [path])


def resolve_spec(
    settings: Settings,
    root: Path,
    *,
    trust_project: bool,
    notify: Callable[[str], None],
) -> SandboxSpec:
    """The sandbox this session's commands run in."""
    user = SandboxSpec(mode=settings.sandbox_mode, network=settings.sandbox_network)
    path = root / PROJECT_CONFIG
    # When the project is $HOME its `.invincat/config.toml` is the user's own file.
    if os.path.realpath(path) == os.path.realpath(settings.home / "config.toml"):
        return user
    values = _project_values(_project_table(path, notify), notify)
    if not values:
        return user
    narrowed, widening = user, []
    mode = values.get("mode")
    if mode is not None:
        if user.mode_widens(mode):
            widening.append(f"mode = {mode!r}")
        else:
            narrowed = replace(narrowed, mode=mode)
    network = values.get("network")
    if network is not None:
        if network and not user.network:
            widening.append("network = true")
        else:
            narrowed = replace(narrowed, network=network)
    if not widening:
        return narrowed
    if _trusted(settings, root, path, trust_project):
        return SandboxSpec(
            mode=values.get("mode", user.mode), network=values.get("network", user.network)
        )
    notify(
        f"The project's {PROJECT_CONFIG} asks to widen the shell sandbox "
        f"({', '.join(widening)}); that was ignored because the file is not trusted, and "
        f"commands run in the sandbox ({narrowed.label()}). A repository must not loosen "
        "its own confinement: review the file, then start "
        f"`invincat chat --trust-project --cwd {root}` to trust this version (any later "
        "change asks again)."
    )
    return narrowed
