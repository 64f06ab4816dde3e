"""The ACP agent: each ACP session is one Invincat thread with its own runtime Session.

Implements the SDK's `Agent` interface (method names and keyword arguments), put together
from one part per concern over the shared state in base.py: lifecycle.py (initialize,
sessions, extension methods), turns.py (prompts and turns), asking.py (permission
requests), commands.py (slash commands and modes), rewind.py (`/rewind`).
"""

from __future__ import annotations

from invincat_server.acp.asking import Asking
from invincat_server.acp.commands import Commands
from invincat_server.acp.lifecycle import Lifecycle
from invincat_server.acp.rewind import Rewinding
from invincat_server.acp.turns import Turns

__all__ = ["InvincatAgent"]


class InvincatAgent(Lifecycle, Turns, Asking, Commands, Rewinding):
    """The agent `acp/server.py` serves."""
