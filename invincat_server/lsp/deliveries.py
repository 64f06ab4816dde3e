"""Answer an approval only after the edit it approved has been sent to the editor.

Accepting a pending edit (the code action's `workspace/executeCommand`, or
`invincat/resolveApproval` from a panel) resumes the turn, whose tool then sends
`workspace/applyEdit`. If the approval were answered first, the edit request would follow
it in a separate write; a client whose JSON-RPC reader handles one message per read of the
pipe (Emacs 28's jsonrpc.el) then sees the edit request only when the next message
arrives, which can be tens of seconds later. So the answer waits until the approved
tool has handed its change to the editor (the request is written, not answered: the
editor may ask its user first), or has finished without one, or the turn ended.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

DELIVERY_TIMEOUT = 10.0
"""Upper bound on holding an approval's answer (a safety net: every tool run ends with a
`tool_result` or the turn's end). Emacs gives up on a synchronous request after 10 s."""


@dataclass
class Delivery:
    """One approved file change on its way to the editor."""

    path: Path
    tool_call_id: str | None
    turn_id: str | None
    done: asyncio.Event = field(default_factory=asyncio.Event)


class EditDeliveries:
    """Approved edits whose approval is not answered yet, by real path."""

    def __init__(self) -> None:
        self._waiting: list[Delivery] = []

    def expect(self, path: Path, tool_call_id: str | None, turn_id: str | None) -> Delivery:
        """Register before resolving: the tool may run before the resolve call returns."""
        delivery = Delivery(path, tool_call_id, turn_id)
        self._waiting.append(delivery)
        return delivery

    def forget(self, delivery: Delivery) -> None:
        with contextlib.suppress(ValueError):
            self._waiting.remove(delivery)

    async def wait(self, delivery: Delivery, timeout: float = DELIVERY_TIMEOUT) -> bool:
        """True once the change reached the editor (or its tool ended), False on timeout."""
        try:
            await asyncio.wait_for(delivery.done.wait(), timeout)
        except TimeoutError:
            return False
        finally:
            self.forget(delivery)
        return True

    # signals -------------------------------------------------------------------------
    def reached_editor(self, path: Path) -> None:
        """An edit of `path` was sent to the editor, or the write needed none."""
        self._finish(lambda d: d.path == path)

    def tool_finished(self, tool_call_id: str) -> None:
        self._finish(lambda d: d.tool_call_id == tool_call_id)

    def turn_ended(self, turn_id: str) -> None:
        self._finish(lambda d: d.turn_id == turn_id)

    def _finish(self, matches: Callable[[Delivery], bool]) -> None:
        for delivery in list(self._waiting):
            if matches(delivery):
                delivery.done.set()
                self._waiting.remove(delivery)
