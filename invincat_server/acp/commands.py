"""Slash commands (`/plan`, `/offload`, `/memory`, `/rules`, `/rewind`: announced, and
the ones answered without the model; `/rewind`'s dialogue is rewind.py) and the session
mode (`session/set_mode`, `session/set_config_option`; the shapes are in modes.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    PromptResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    UnstructuredCommandInput,
)

from invincat_server.acp import rewind_text, rules, updates
from invincat_server.acp.base import AcpSession, AgentBase, log, rpc_error
from invincat_server.acp.modes import (
    checked_mode,
    checked_option,
    config_options,
    mode_updates,
)
from invincat_server.runtime.errors import SessionError
from invincat_server.runtime.events import (
    ApprovalRequested,
)

COMMANDS = {
    "plan": ("Plan first: a read-only planner proposes a plan to approve", "what to plan"),
    "offload": ("Move all but the latest turn out of the model's context into a file", None),
    "memory": ("List what Invincat remembers about you and this project", None),
    "rules": (rules.DESCRIPTION, rules.HINT),
    "rewind": (rewind_text.DESCRIPTION, rewind_text.HINT),
}
DROPPED_PLAN = (
    "The user switched back to agent mode instead of refining the plan: the plan is dropped; "
    "do not carry it out."
)


class Commands(AgentBase):
    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        await self._set_mode(self._require(session_id), checked_mode(mode_id))
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        acp_session = self._require(session_id)
        checked_option(config_id)
        await self._set_mode(acp_session, checked_mode(value))
        return SetSessionConfigOptionResponse(config_options=config_options(acp_session.mode))

    async def _set_mode(self, acp_session: AcpSession, mode: str) -> None:
        acp_session.mode = mode
        for update in mode_updates(mode):
            await self._client.session_update(session_id=acp_session.session_id, update=update)
        waiting = acp_session.awaiting_reply
        if mode == "agent" and waiting is not None and waiting.kind == "plan":
            await self._drop_refinement(acp_session, waiting)

    async def _drop_refinement(self, acp_session: AcpSession, request: ApprovalRequested) -> None:
        """Back to agent mode while a plan waits for Refine feedback: the user left planning,
        so the plan is rejected and its turn ends; the next prompt is an ordinary one."""
        acp_session.awaiting_reply = None
        decision = {"type": "reject", "message": DROPPED_PLAN}
        result = await acp_session.runtime.resolve(request.approval_id, decision)
        if not result.resolved:
            log.info("plan %s not dropped: %s", request.approval_id, result.reason)
        if acp_session.pump is not None:
            # Answer once the plan's turn is over, so the next prompt finds the session idle.
            await asyncio.wait({acp_session.pump})
        await self._client.session_update(
            session_id=acp_session.session_id,
            update=updates.agent_text("\n\nThe plan is dropped: back in agent mode.\n"),
        )

    async def _offload(self, acp_session: AcpSession) -> PromptResponse:
        if not acp_session.has_thread:
            return await self._say(acp_session, "Nothing to offload yet.")
        try:
            report = await acp_session.runtime.offload(acp_session.session_id)
        except SessionError as exc:
            raise rpc_error(str(exc)) from None
        if not report["offloadedMessages"]:
            return await self._say(acp_session, "Nothing to offload: the thread is short.")
        return await self._say(
            acp_session,
            f"Offloaded {report['offloadedMessages']} messages to {report['file']} "
            f"({report['tokensBefore']} → {report['tokensAfter']} tokens).",
        )

    async def _memory_summary(self, acp_session: AcpSession) -> PromptResponse:
        from invincat_server.acp.memory import summary

        text = await asyncio.to_thread(summary, acp_session.runtime, acp_session.project)
        return await self._say(acp_session, text)

    async def _announce(self, acp_session: AcpSession) -> None:
        commands = [
            AvailableCommand(
                name=name,
                description=description,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))
                if hint
                else None,
            )
            for name, (description, hint) in COMMANDS.items()
        ]
        await self._client.session_update(
            session_id=acp_session.session_id,
            update=AvailableCommandsUpdate(
                session_update="available_commands_update", available_commands=commands
            ),
        )
