"""MCP server configuration files: where they are, what they say, how they merge.

Format (the one most MCP clients share)::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "some-server"], "env": {"K": "v"}},
        "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    }}

Extra keys per server: `autoApprove` (tool names or `"*"`), `disabled`, `cwd`, `timeout`
(seconds per call), `startupTimeout`, `type` (`"stdio"` or `"http"`; inferred when absent).
See docs/mcp.md.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

USER_FILE = "mcp.json"
"""Under `$INVINCAT_HOME`."""
PROJECT_FILES = (".mcp.json", ".invincat/mcp.json")
"""Relative to the project root; later files override earlier ones by server name."""

DEFAULT_CALL_TIMEOUT = 120.0
DEFAULT_STARTUP_TIMEOUT = 30.0
_NAME_OK = re.compile(r"[^A-Za-z0-9_-]")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamableHttp"})


class McpConfigError(ValueError):
    """A server entry that cannot be used; the message names the file and the server."""


@dataclass(frozen=True)
class ServerSpec:
    """One configured MCP server."""

    name: str
    """Name as used in tool names (`<name>__<tool>`): letters, digits, `_` and `-`."""
    source: Path
    """The file that defined it."""
    scope: Literal["user", "project"]
    transport: Literal["stdio", "http"]
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auto_approve: frozenset[str] = frozenset()
    """MCP tool names (unprefixed) that run without asking; `"*"` means all of them."""
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT

    def auto_approves(self, tool: str) -> bool:
        return "*" in self.auto_approve or tool in self.auto_approve


@dataclass
class LoadedConfig:
    """Servers from one file, plus the problems found in it (reported, not fatal)."""

    path: Path
    servers: dict[str, ServerSpec] = field(default_factory=dict)
    disabled: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def sanitize_name(name: str) -> str:
    """A name the model API accepts in tool names (`^[A-Za-z0-9_-]+$`)."""
    cleaned = _NAME_OK.sub("_", name.strip())
    return cleaned or "server"


def expand_vars(value: str, env: Mapping[str, str], where: str) -> str:
    """`${VAR}` and `${VAR:-default}` from the environment, so secrets stay out of files."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise McpConfigError(f"{where}: environment variable {name} is not set")

    return _VAR.sub(replace, value)


def _str_map(raw: object, what: str, env: Mapping[str, str], where: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise McpConfigError(f"{where}: `{what}` must be an object of strings")
    return {str(k): expand_vars(str(v), env, where) for k, v in raw.items()}


def _number(raw: object, what: str, default: float, where: str) -> float:
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
        raise McpConfigError(f"{where}: `{what}` must be a positive number of seconds")
    return float(raw)


def parse_server(
    name: str,
    raw: object,
    *,
    source: Path,
    scope: Literal["user", "project"],
    env: Mapping[str, str],
) -> ServerSpec:
    """One `mcpServers` entry → ServerSpec; raises McpConfigError saying what is wrong."""
    where = f"{source}: server {name!r}"
    if not isinstance(raw, dict):
        raise McpConfigError(f"{where}: expected an object with `command` or `url`")
    kind = raw.get("type")
    if kind == "sse":
        raise McpConfigError(
            f"{where}: the legacy SSE transport is not supported; use the server's "
            "streamable HTTP endpoint (usually ending in /mcp)"
        )
    approve = raw.get("autoApprove", [])
    if not isinstance(approve, list) or not all(isinstance(a, str) for a in approve):
        raise McpConfigError(f'{where}: `autoApprove` must be a list of tool names or "*"')
    common: dict[str, Any] = {
        "name": sanitize_name(name),
        "source": source,
        "scope": scope,
        "auto_approve": frozenset(approve),
        "call_timeout": _number(raw.get("timeout"), "timeout", DEFAULT_CALL_TIMEOUT, where),
        "startup_timeout": _number(
            raw.get("startupTimeout"), "startupTimeout", DEFAULT_STARTUP_TIMEOUT, where
        ),
    }
    if "url" in raw or kind in _HTTP_TYPES:
        url = raw.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise McpConfigError(f"{where}: `url` must be an http:// or https:// URL")
        return ServerSpec(
            transport="http",
            url=expand_vars(url, env, where),
            headers=_str_map(raw.get("headers"), "headers", env, where),
            **common,
        )
    if kind not in (None, "stdio"):
        raise McpConfigError(f'{where}: unknown `type` {kind!r}; use "stdio" or "http"')
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise McpConfigError(f"{where}: needs `command` (a program to run) or `url`")
    args = raw.get("args", [])
    if not isinstance(args, list):
        raise McpConfigError(f"{where}: `args` must be a list of strings")
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise McpConfigError(f"{where}: `cwd` must be a string")
    return ServerSpec(
        transport="stdio",
        command=expand_vars(command, env, where),
        args=tuple(expand_vars(str(a), env, where) for a in args),
        env=_str_map(raw.get("env"), "env", env, where),
        cwd=expand_vars(cwd, env, where) if cwd else None,
        **common,
    )


def load_file(
    path: Path, scope: Literal["user", "project"], env: Mapping[str, str] | None = None
) -> LoadedConfig | None:
    """Servers in one config file; None if the file does not exist."""
    env = os.environ if env is None else env
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        return LoadedConfig(path, errors=[f"Cannot read MCP config {path}: {exc}"])
    loaded = LoadedConfig(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        loaded.errors.append(f"MCP config {path} is not valid JSON: {exc}. Fix the file.")
        return loaded
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        loaded.errors.append(f'MCP config {path} has no "mcpServers" object; nothing to start.')
        return loaded
    return load_servers(servers, path, scope, env)


def load_servers(
    servers: Mapping[str, object],
    source: Path,
    scope: Literal["user", "project"],
    env: Mapping[str, str],
) -> LoadedConfig:
    """Servers from an `mcpServers` mapping that did not come from a file (an editor passed
    them); `source` names where from in messages."""
    loaded = LoadedConfig(source)
    for name, raw in servers.items():
        if isinstance(raw, dict) and raw.get("disabled") is True:
            loaded.disabled.append(name)
            continue
        try:
            spec = parse_server(str(name), raw, source=source, scope=scope, env=env)
        except McpConfigError as exc:
            loaded.errors.append(f"MCP server not started: {exc}.")
            continue
        loaded.servers[spec.name] = spec
    return loaded


def user_config_path(home: Path) -> Path:
    return home / USER_FILE


def project_config_paths(root: Path) -> list[Path]:
    """The project's config files that exist, in override order."""
    return [root / rel for rel in PROJECT_FILES if (root / rel).is_file()]


def merge(configs: list[LoadedConfig]) -> dict[str, ServerSpec]:
    """Later configs replace earlier servers of the same name (whole entries, so a project
    never inherits a user entry's `autoApprove`)."""
    merged: dict[str, ServerSpec] = {}
    for config in configs:
        for name in config.disabled:
            merged.pop(sanitize_name(name), None)
        merged.update(config.servers)
    return merged
