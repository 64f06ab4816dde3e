"""Context management middleware for the main agent.

Before every model call: if the estimated context passes `threshold * window`, older turns
are summarised by the model into one message and a cut point is recorded (auto-compaction).
On every model request: the recorded compaction is applied and old bulky tool outputs are
replaced by placeholders (micro-compaction). Neither rewrites the checkpointed messages.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from invincat_server.runtime.context.micro import micro_compact
from invincat_server.runtime.context.tokens import estimate_tokens
from invincat_server.runtime.context.transcript import transcript
from invincat_server.runtime.context.window import ContextState, cut_index, visible_messages
from invincat_server.runtime.memory.redaction import keep_end, redact_and_cut, redact_text

log = logging.getLogger("invincat.context")

SUMMARY_SYSTEM_PROMPT = (
    "You summarize the earlier part of a conversation between a user and a coding assistant "
    "so the assistant can continue the work without it. Keep: the user's goals and explicit "
    "instructions, decisions made, files read or changed and what is in them now, commands "
    "run and their outcomes, problems still open, next steps. Drop pleasantries and "
    "reasoning that led nowhere. At most 300 words. Output only the summary."
)
MAX_TRANSCRIPT_CHARS = 48_000
MAX_SUMMARY_TOOL_CHARS = 2_000
FALLBACK_ASK_CHARS = 300


@dataclass(frozen=True)
class ContextSettings:
    """Context management knobs (see docs/configuration.md)."""

    window: int
    threshold: float = 0.8
    keep_fraction: float = 0.35
    micro: bool = True
    auto: bool = True


def fallback_summary(messages: Sequence[AnyMessage]) -> str:
    """Used when the model cannot summarise: what the user asked, short; each prompt is
    redacted before it is cut (a cut through a secret leaves half of it unrecognised)."""
    asks = [
        redact_and_cut(m.text, FALLBACK_ASK_CHARS) for m in messages if isinstance(m, HumanMessage)
    ]
    lines = "\n".join(f"- {ask}" for ask in asks[-20:])
    return f"(automatic summary unavailable) Earlier, the user asked:\n{lines}"


class ContextMiddleware(AgentMiddleware):
    state_schema = ContextState

    def __init__(self, model: BaseChatModel, settings: ContextSettings, system_prompt: str):
        super().__init__()
        self.model = model
        self.settings = settings
        self.system_prompt = system_prompt

    def estimate(self, messages: Sequence[AnyMessage]) -> int:
        shown = micro_compact(messages) if self.settings.micro else list(messages)
        return estimate_tokens(shown, self.system_prompt)

    def model_view(
        self, messages: Sequence[AnyMessage], compaction: dict[str, Any] | None
    ) -> list[AnyMessage]:
        shown = visible_messages(messages, compaction)
        return micro_compact(shown) if self.settings.micro else shown

    # The state is this middleware's own schema (state_schema), a subtype of AgentState.
    async def abefore_model(  # type: ignore[override]
        self, state: ContextState, runtime: Runtime
    ) -> dict[str, Any] | None:
        if not self.settings.auto:
            return None
        messages = state["messages"]
        compaction = state.get("compaction")
        before = self.estimate(visible_messages(messages, compaction))
        if before <= self.settings.threshold * self.settings.window:
            return None
        new = await self.compact(messages, compaction, reason="auto")
        if new is None:
            return None
        get_stream_writer()(
            {
                "type": "context_usage",
                "tokens": new["tokens_after"],
                "limit": self.settings.window,
                "compacted": True,
                "tokens_before": before,
            }
        )
        return {"compaction": new}

    async def compact(
        self,
        messages: Sequence[AnyMessage],
        compaction: dict[str, Any] | None,
        *,
        reason: str,
        keep_tokens: int | None = None,
        summarize: bool = True,
        note: str = "",
    ) -> dict[str, Any] | None:
        """A new compaction record cutting as much as fits, or None if nothing can be cut."""
        keep = (
            keep_tokens
            if keep_tokens is not None
            else int(self.settings.keep_fraction * self.settings.window)
        )
        index = cut_index(messages, keep, self.estimate)
        ids = [m.id for m in messages]
        previous_cut = (
            ids.index(compaction["cut_id"]) if compaction and compaction.get("cut_id") in ids else 0
        )
        if index is None or index <= previous_cut:
            return None
        dropped = messages[previous_cut:index]
        previous = (compaction or {}).get("summary", "")
        summary = await self._summary(previous, dropped) if summarize else fallback_summary(dropped)
        # The summary is checkpointed and outlives the messages it replaces (and the
        # fallback quotes the user's prompts): it never keeps a secret.
        summary = redact_text(summary)
        if note:
            summary = f"{summary}\n\n{note}"
        record = {
            "cut_id": messages[index].id,
            "summary": summary,
            "reason": reason,
            "messages_cut": index,
            "tokens_before": self.estimate(visible_messages(messages, compaction)),
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        record["tokens_after"] = self.estimate(visible_messages(messages, record))
        return record

    async def _summary(self, previous: str, dropped: Sequence[AnyMessage]) -> str:
        # The summariser's input is redacted (tool outputs before they are cut): what it
        # never sees it cannot quote, whole or cut, into a summary that is checkpointed.
        text = transcript(dropped, max_tool_chars=MAX_SUMMARY_TOOL_CHARS, redact=redact_text)
        if len(text) > MAX_TRANSCRIPT_CHARS:
            text = "…" + keep_end(text, MAX_TRANSCRIPT_CHARS)
        if previous:
            text = f"Summary of what came before:\n{previous}\n\nThen:\n{text}"
        try:
            reply = await self.model.ainvoke(
                [SystemMessage(SUMMARY_SYSTEM_PROMPT), HumanMessage(text)]
            )
        except Exception as exc:  # a failed summary must not fail the turn
            # Logs reach the editor's log file: redacted like everything stored.
            log.warning("summary failed, using fallback: %s", redact_text(str(exc)))
            return fallback_summary(dropped)
        summary = reply.text.strip()
        return summary or fallback_summary(dropped)

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        compaction = cast("dict[str, Any] | None", request.state.get("compaction"))
        view = self.model_view(request.messages, compaction)
        return await handler(request.override(messages=view))
