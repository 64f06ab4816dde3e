"""Which "Invincat: …" code actions the lightbulb offers, and where that is configured.

`initializationOptions.codeActions = {fix, explain, ask}` (booleans) sets them at start;
a client with `workspace.configuration` is then asked for the section
`invincat.codeActions` (and again after `workspace/didChangeConfiguration`), which wins
field by field. The code-action handler only reads the cached values: answering code
actions never waits for the client or the session.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.capabilities import get_capability

if TYPE_CHECKING:
    from invincat_server.lsp.server import InvincatLanguageServer

log = logging.getLogger("invincat.lsp.code_actions")

SECTION = "invincat.codeActions"
FIELDS = ("fix", "explain", "ask")
FETCH_TIMEOUT = 30.0


class CodeActionSettings:
    """`fix` and `explain` are on by default; `ask` only when the client said it can ask
    its user for the question (it intercepts `invincat.startChat` and fills in `prompt`)."""

    def __init__(self, ls: InvincatLanguageServer) -> None:
        self._ls = ls
        self.fix = True
        self.explain = True
        self.ask = False
        self._fetching: asyncio.Future[None] | None = None

    def update(self, raw: Any, where: str) -> None:
        """Take the booleans of `raw` (an object; missing fields keep their value). A wrong
        type is named to the user and ignored: start-up must not fail over a setting."""
        if raw is None:
            return
        if not isinstance(raw, dict):
            self._ls.warn_user(f'{where} must be an object like {{"fix": true}}; ignored.')
            return
        bad = []
        for name in FIELDS:
            value = raw.get(name)
            if value is None:
                continue
            if isinstance(value, bool):
                setattr(self, name, value)
            else:
                bad.append(name)
        if bad:
            names = ", ".join(f"{where}.{name}" for name in bad)
            self._ls.warn_user(f"{names} must be true or false; ignored.")

    def from_initialize(self, params: types.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict):
            self.update(options.get("codeActions"), "initializationOptions.codeActions")

    def start_fetch(self) -> None:
        """`fetch` in the background (the task is kept so it is not collected mid-way)."""
        self._fetching = asyncio.ensure_future(self.fetch())

    async def fetch(self) -> None:
        """Ask the client for `invincat.codeActions` (if it supports workspace/configuration)."""
        caps = self._ls.client_capabilities
        if not get_capability(caps, "workspace.configuration", False):
            return
        params = types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        try:
            result = await asyncio.wait_for(
                self._ls.workspace_configuration_async(params), FETCH_TIMEOUT
            )
        except Exception as exc:  # a client that fails this still gets code actions
            log.info("workspace/configuration for %s failed: %s", SECTION, exc)
            return
        if result:
            self.update(result[0], SECTION)
