"""Keeps every agent's tools away from the memory stores (spec §9) and from Invincat's
settings under `$INVINCAT_HOME` (issue 13 §1).

- `execute` commands that name or glob-match a store, journal, lock or backup are refused
  before they run (file tools are refused by the workspace's deny hook, search tools skip
  `.invincat/`).
- A shell command can still read a store in ways no parser can foresee (`grep -r . `, a
  hard link, a script): lines of `execute` output that carry store or journal data are
  withheld, so the content never reaches the model (nor the user's screen: live
  `tool_output` lines go through the same filter).
- Around every tool execution the stores are fingerprinted; a change that did not go
  through governance is quarantined and reverted, the tool result says so to the model and
  an `error` event tells the user.
- The same holds for the settings files that grant permissions or start code (approval
  rules, trust, MCP config, config.toml, subagents.json, skills): commands naming them are
  refused, output lines carrying the secret-bearing ones are withheld, and a change no
  Invincat code made is put back (`policy/settings_watch.py`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.config import get_stream_writer
from langgraph.types import Command

from invincat_server.runtime.memory.service import MemoryService
from invincat_server.runtime.policy.settings_watch import SettingsSnapshot, SettingsWatch
from invincat_server.runtime.tool_outcome import declined
from invincat_server.runtime.tools.shell import live_output_filtered

log = logging.getLogger("invincat.memory_guard")

WITHHELD = "[line withheld: it contains memory store or Invincat settings data]"
MIN_NEEDLE = 12
# Settings files whose lines may carry secrets (MCP env and headers, endpoints, tokens).
SECRET_BEARING = frozenset({"mcp.json", "config.toml", "subagents.json"})


def needles(before: Any, memory: MemoryService) -> list[str]:
    """Strings whose presence in tool output means store data is leaking: every line of
    the stores and journals, and every entry's content as plain text."""
    found: set[str] = set()
    for snap in (*before.stores.values(), *before.journals.values()):
        if snap.data:
            text = snap.data.decode("utf-8", "replace")
            found.update(line.strip() for line in text.splitlines())
    try:
        found.update(e.content for e in memory.list(include_archived=True))
    except Exception:  # an unreadable store still has its raw lines above
        log.warning(
            "memory guard: entries unreadable, guarding raw store lines only", exc_info=True
        )
    return sorted((n for n in found if len(n) >= MIN_NEEDLE), key=len)


def settings_needles(snapshot: SettingsSnapshot | None) -> list[str]:
    """Lines of the secret-bearing settings files, which must not reach the model."""
    found: set[str] = set()
    for path, data in snapshot.files.items() if snapshot else ():
        if data and path.name in SECRET_BEARING and path.parent.name != "skills":
            found.update(line.strip() for line in data.decode("utf-8", "replace").splitlines())
    return [n for n in found if len(n) >= MIN_NEEDLE]


def withhold_line(line: str, patterns: list[str]) -> str:
    """The line, or the WITHHELD marker if it carries one of ``patterns``."""
    if len(line) >= MIN_NEEDLE and any(p in line for p in patterns):
        return WITHHELD
    return line


def withhold_memory_lines(result: ToolMessage, patterns: list[str]) -> ToolMessage:
    text = result.content if isinstance(result.content, str) else result.text
    if not patterns:
        return result
    lines = text.split("\n")
    filtered = [withhold_line(line, patterns) for line in lines]
    if filtered == lines:
        return result
    return result.model_copy(update={"content": "\n".join(filtered)})


class MemoryGuardMiddleware(AgentMiddleware):
    def __init__(self, memory: MemoryService, settings: SettingsWatch | None = None) -> None:
        super().__init__()
        self.memory = memory
        self.settings = settings

    async def awrap_tool_call(
        self,
        request: Any,
        handler: Callable[[Any], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        if call["name"] == "execute":
            command = str(call["args"].get("command", ""))
            reason = self.memory.guard.command_touches_memory(command, self.memory.project_root)
            if reason:
                text = reason if reason.startswith("Refused") else f"Refused: {reason}"
                # Refused, not failed: the user sees it `rejected` like any declined call.
                return declined(
                    f"{text} Nothing was run.", tool_call_id=call["id"], name=call["name"]
                )
        before = await asyncio.to_thread(self.memory.fingerprint)
        settings_before = (
            await asyncio.to_thread(self.settings.snapshot) if self.settings is not None else None
        )
        # Read what must not leak before the tool runs: afterwards the store may be mangled.
        secret = (
            sorted({*needles(before, self.memory), *settings_needles(settings_before)}, key=len)
            if call["name"] == "execute"
            else []
        )
        if call["name"] == "execute":
            # Live output of the command is filtered line by line exactly as the result is.
            with live_output_filtered(
                call["id"], functools.partial(withhold_line, patterns=secret)
            ):
                result = await handler(request)
        else:
            result = await handler(request)
        if secret and isinstance(result, ToolMessage):
            result = withhold_memory_lines(result, secret)
        reports = []
        report = await asyncio.to_thread(self.memory.restore_if_tampered, before)
        if report is not None:
            reports.append(report.message)
        if self.settings is not None and settings_before is not None:
            settings_report = await asyncio.to_thread(
                self.settings.restore_if_tampered, settings_before
            )
            if settings_report is not None:
                reports.append(settings_report)
        if not reports:
            return result
        for message in reports:
            try:
                get_stream_writer()({"type": "error", "message": message})
            except RuntimeError:
                pass  # outside a streaming run (e.g. a direct invoke): the result still says it
        if isinstance(result, ToolMessage):
            text = result.content if isinstance(result.content, str) else result.text
            joined = "\n\n".join(reports)
            return result.model_copy(update={"content": f"{text}\n\n{joined}", "status": "error"})
        return result
