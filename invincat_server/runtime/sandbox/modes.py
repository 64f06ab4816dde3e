"""What the shell sandbox allows: a mode and whether the network is on.

Modes, narrowest first: `read-only` (nothing writable but a private /tmp),
`workspace-write` (the default: the workspace too, except its `.git/` and Invincat's
settings), `off` (commands run unconfined, as before the sandbox existed).
"""

from __future__ import annotations

from dataclasses import dataclass

from invincat_server.runtime.config import DEFAULT_SANDBOX_MODE, SANDBOX_MODES

__all__ = ["SANDBOX_MODES", "SandboxSpec"]


def _rank(mode: str) -> int:
    return SANDBOX_MODES.index(mode)


@dataclass(frozen=True)
class SandboxSpec:
    """A sandbox setting: `mode` (one of SANDBOX_MODES) and `network` (allowed or not)."""

    mode: str = DEFAULT_SANDBOX_MODE
    network: bool = False

    @property
    def confined(self) -> bool:
        return self.mode != "off"

    def mode_widens(self, mode: str) -> bool:
        """Whether switching to `mode` would allow more than this spec does."""
        return _rank(mode) > _rank(self.mode)

    def label(self) -> str:
        """`workspace-write, no network`: how a command runs, for approvals and notes."""
        if not self.confined:
            return "off"
        return f"{self.mode}, {'network allowed' if self.network else 'no network'}"
