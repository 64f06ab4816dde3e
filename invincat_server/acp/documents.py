"""The client's editor buffers as the agent's view of files (the runtime's DocumentSource).

When the client offers `fs.readTextFile`, reads ask it first (`fs/read_text_file`), so the
model sees unsaved text; when it offers `fs.writeTextFile`, approved edits go through it
(`fs/write_text_file`), so the open buffer changes instead of the file underneath it.

Consent rule (same as the LSP path's promise): a refusal is a refusal. If the client
answers a write with an error, or does not answer, nothing is written to disk and the
tool call fails with the reason. Only a client that does not offer writing at all gets
the disk write.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from invincat_server.acp.transport import BlockingRequestError, StdioTransport

if TYPE_CHECKING:
    from acp.interfaces import Client

log = logging.getLogger("invincat.acp.documents")

READ_TIMEOUT = 10.0
"""Seconds the event loop waits for the client's buffer text before using the disk."""
WRITE_TIMEOUT = 60.0
"""Seconds to wait for the client to apply a write; after that the write is refused."""


class ClientWriteRefused(OSError):
    """The client refused (or failed) to apply an approved write: nothing was written.

    An OSError so the file tools report it to the model like any failed write (an error
    tool result carrying this message) instead of crashing the turn."""


class ClientDocuments:
    """Reads and writes through the ACP client for one ACP session (`session_id`)."""

    def __init__(
        self,
        transport: StdioTransport,
        client: Client,
        session_id: str,
        *,
        can_read: bool,
        can_write: bool,
    ) -> None:
        self._transport = transport
        self._client = client
        self._session_id = session_id
        self._can_read = can_read
        self._can_write = can_write

    def read_text(self, path: Path) -> str | None:
        """The client's text for `path` (its unsaved buffer if open), else None → disk.

        Called synchronously on the event loop by the tools, so the request is answered
        on the transport's reader thread (see transport.py)."""
        if not self._can_read:
            return None
        try:
            result = self._transport.request_blocking(
                "fs/read_text_file",
                {"sessionId": self._session_id, "path": str(path)},
                READ_TIMEOUT,
            )
        except BlockingRequestError as exc:
            # Typically "file not found" for a file the agent is about to create.
            log.debug("client read of %s failed, using the disk: %s", path, exc)
            return None
        content = result.get("content") if isinstance(result, dict) else None
        return content if isinstance(content, str) else None

    async def write_text(self, path: Path, text: str) -> bool:
        """True when the client applied the write; False (→ disk) only if it cannot write.
        Raises ClientWriteRefused when it can but did not: the write must not happen."""
        if not self._can_write:
            return False
        try:
            await asyncio.wait_for(
                self._client.write_text_file(
                    session_id=self._session_id, path=str(path), content=text
                ),
                WRITE_TIMEOUT,
            )
        except TimeoutError as exc:
            raise ClientWriteRefused(
                f"The editor did not apply the change to {path} within {WRITE_TIMEOUT:g} s; "
                "nothing was written."
            ) from exc
        except Exception as exc:
            raise ClientWriteRefused(
                f"The editor refused the change to {path} ({exc}); nothing was written."
            ) from exc
        return True
