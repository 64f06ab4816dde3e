"""A scripted ACP client (the SDK's client side) driving the real `invincat --acp` process.

It records every `session/update`, answers `session/request_permission` from a queue of
option ids (or waits, when none is queued), and serves `fs/*` from an in-memory set of
"unsaved buffers", falling back to the disk, like an editor would.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import RequestError, spawn_agent_process
from acp.connection import StreamEvent
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

INVINCAT = str(Path(sys.executable).with_name("invincat"))
DEADLINE = 90.0


class ScriptedClient:
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permission_requests: list[dict[str, Any]] = []
        self.answers: asyncio.Queue[str | None] = asyncio.Queue()
        self.buffers: dict[str, str] = {}
        self.writes: list[tuple[str, str]] = []
        self.refuse_writes = False
        self.reads: list[str] = []
        self.incoming: list[dict[str, Any]] = []
        self.ext_notifications: list[tuple[str, dict[str, Any]]] = []
        self._changed = asyncio.Condition()

    # what the agent calls ---------------------------------------------------------
    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        await self._notify()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append({"tool_call": tool_call, "options": options})
        await self._notify()
        answer = await self.answers.get()
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        if self.refuse_writes:
            raise RequestError(-32000, "The user declined the change")
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.ext_notifications.append((method, params))
        await self._notify()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    def on_connect(self, conn: Any) -> None:
        pass

    # test helpers -----------------------------------------------------------------
    async def observe(self, event: StreamEvent) -> None:
        if event.direction.value == "incoming":
            self.incoming.append(event.message)
            await self._notify()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = DEADLINE) -> Any:
        async def check() -> Any:
            async with self._changed:
                while not (result := predicate()):
                    await self._changed.wait()
                return result

        return await asyncio.wait_for(check(), timeout)

    def of_kind(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self) -> str:
        return "".join(
            u.content.text for u in self.of_kind("agent_message_chunk") if u.content.type == "text"
        )


def capabilities(*, fs: bool = True) -> ClientCapabilities:
    return ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=False
    )


@asynccontextmanager
async def acp_agent(
    env: dict[str, str], cwd: Path, client: ScriptedClient
) -> AsyncIterator[tuple[Any, Any]]:
    """The real `invincat --acp` process and the SDK client connection to it."""
    async with spawn_agent_process(
        client,
        INVINCAT,
        "--acp",
        env=env,
        cwd=cwd,
        observers=[client.observe],
        transport_kwargs={"stderr": None, "shutdown_timeout": 30.0},
    ) as (conn, process):
        yield conn, process
