"""What a change to a project's permission-bearing settings file would grant.

`.mcp.json` / `.invincat/mcp.json` start programs (and can auto-approve their tools),
`.invincat/subagents.json` sends tasks to servers, `.invincat/config.toml` configures the
memory agent. The agent may propose such a change, but only with an approval that names
what it grants (issue 13 §1): `ApprovalPolicy` asks for these files even under an "always
allow file writes" rule, and the approval description ends with the sentence built here.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from invincat_server.runtime.policy.protected_files import PROJECT_SETTINGS_FILES

MAX_ITEM = 160


def project_settings_name(root: Path, path: object) -> str | None:
    """`.mcp.json`, `.invincat/config.toml`, … if `path` (as the model wrote it, relative
    to `root`) resolves to one of the project's permission-bearing files, else None."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    raw = Path(path)
    target = raw if raw.is_absolute() else root / raw
    try:
        real = os.path.normcase(os.path.realpath(target))
        for name in PROJECT_SETTINGS_FILES:
            if real == os.path.normcase(os.path.realpath(root / name)):
                return name
    except (OSError, ValueError):
        return None
    return None


def _short(text: str) -> str:
    return text if len(text) <= MAX_ITEM else text[: MAX_ITEM - 1] + "…"


def _json_table(text: str | None, key: str) -> dict[str, Any] | None:
    """The `key` table of a JSON file; {} for no file, None if it does not parse."""
    if not text:
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    table = data.get(key) if isinstance(data, dict) else None
    return table if isinstance(table, dict) else {}


def _mcp_grants(old: str | None, new: str) -> list[str]:
    before, after = _json_table(old, "mcpServers") or {}, _json_table(new, "mcpServers")
    if after is None:
        return ["cannot be read as JSON, so what it would start is unknown"]
    grants = []
    for name, spec in after.items():
        if before.get(name) == spec or not isinstance(spec, dict):
            continue
        if spec.get("disabled") is True:
            continue
        if spec.get("url"):
            grants.append(f"connects to MCP server `{name}` at {spec.get('url')}")
        else:
            argv = " ".join(str(a) for a in [spec.get("command", "?"), *spec.get("args", [])])
            grants.append(_short(f"starts MCP server `{name}` (command `{argv}`)"))
        auto = spec.get("autoApprove")
        if auto:
            tools = "all its tools" if "*" in auto else ", ".join(map(str, auto))
            grants.append(_short(f"auto-approves `{name}` tools: {tools}"))
    return grants


def _subagent_grants(old: str | None, new: str) -> list[str]:
    before, after = _json_table(old, "remote") or {}, _json_table(new, "remote")
    if after is None:
        return ["cannot be read as JSON, so where tasks would be sent is unknown"]
    return [
        _short(f"sends tasks to remote subagent `{name}` at {spec.get('url', '?')}")
        for name, spec in after.items()
        if isinstance(spec, dict) and before.get(name) != spec
    ]


def _toml_grants(old: str | None, new: str) -> list[str]:
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        return ["cannot be read as TOML"]
    try:
        before = tomllib.loads(old or "")
    except tomllib.TOMLDecodeError:
        before = {}
    changed = [key for key in sorted({*before, *after}) if before.get(key) != after.get(key)]
    grants = [_short(f"changes settings: {', '.join(changed)}")] if changed else []
    if "sandbox" in changed:
        grants.append(_sandbox_change(before.get("sandbox"), after.get("sandbox")))
    return grants


def _sandbox_change(old: object, new: object) -> str:
    """The `[sandbox]` change spelled out: a repository may narrow its shell sandbox, and
    widen it only once the user trusts the file (runtime/sandbox/project.py)."""
    before = old if isinstance(old, dict) else {}
    after = new if isinstance(new, dict) else {}

    def shown(table: dict[str, Any], key: str) -> str:
        return repr(table.get(key, "(unset)"))[:40]

    parts = [
        f"{key} {shown(before, key)} → {shown(after, key)}"
        for key in ("mode", "network")
        if before.get(key) != after.get(key)
    ]
    return (
        f"changes the shell sandbox ({', '.join(parts) or 'its table'}; "
        "a wider one applies only once the project is trusted)"
    )


def describe_grants(name: str, old: str | None, new: str) -> str:
    """One sentence for the approval: what writing `new` over `old` to `name` grants."""
    if name.endswith("mcp.json"):
        grants = _mcp_grants(old, new)
        note = " (project MCP servers still start only once the project is trusted)"
    elif name.endswith("subagents.json"):
        grants, note = _subagent_grants(old, new), ""
    else:
        grants, note = _toml_grants(old, new), ""
    if not grants:
        return f"{name} grants permissions; this change adds nothing new."
    return f"This change to {name} grants: " + "; ".join(grants) + note + "."
