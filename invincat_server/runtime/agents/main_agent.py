"""The main coding agent: `create_agent` with Invincat's middleware stack."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver

from invincat_server.runtime.agents.approval_middleware import ApprovalMiddleware
from invincat_server.runtime.agents.history_repair import HistoryRepairMiddleware

REMEMBERING = (
    "## Memory\n"
    "Invincat's memory keeps the conventions and preferences the user states, across "
    "sessions: it reads this conversation after your answer. When the user asks you to "
    "remember something, confirm it in one plain sentence; do not write it to a file "
    "unless they ask for a file."
)
"""The section a main agent gets when the memory agent runs after its turns: a model told
to "remember" otherwise writes the fact into some file (Qwen2.5-Coder-1.5B wrote a
Makefile, bench/README.md)."""


MEMORY_TOOL_NOTE = (
    "Nothing needs a tool to be remembered: Invincat's memory reads this conversation "
    "after your answer and keeps what the user asked it to. Do not call a tool for it; "
    "reply to the user in one plain sentence."
)
_MEMORY_NAME = re.compile(r"memor|remember|memo(?:_|$)", re.IGNORECASE)


def memory_tool_note(name: str) -> str | None:
    """The hint for a call to a tool that is not offered whose name is about memory
    (`write_memory`, `save_memory`, `remember`): Qwen2.5-Coder-1.5B, asked to remember a
    convention, called a `write_memory` it was never offered five times and the turn
    failed, so the memory agent (which runs after completed turns) never saw it."""
    return MEMORY_TOOL_NOTE if _MEMORY_NAME.search(name) else None


def system_prompt(workspace_root: str, sections: Sequence[str] = ()) -> str:
    """The main agent's instructions; extensions append sections (skills, MCP, ...)."""
    base = (
        "You are Invincat, a careful AI coding assistant working in the user's project at "
        f"{workspace_root}.\n"
        "- Do the work with the tools: read a file before you explain or change it, and "
        "change files with edit_file (small, exact edits) or write_file; never show code "
        "for the user to paste instead.\n"
        "- Paths are relative to the project root; tools cannot reach outside it.\n"
        "- Writes and shell commands are shown to the user for approval. If the user rejects "
        "a call, do not retry it unchanged: follow their message or ask what they want.\n"
        "- Be concise: say what you found, or what you changed and how you checked it."
    )
    return "\n\n".join([base, *[s for s in sections if s.strip()]])


def build_main_agent(
    *,
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    approvals: ApprovalMiddleware,
    context: AgentMiddleware | None,
    checkpointer: BaseCheckpointSaver | None,
    workspace_root: str,
    prompt: str | None = None,
    extra_middleware: Sequence[AgentMiddleware] = (),
    guards: Sequence[AgentMiddleware] = (),
) -> Any:
    """Compile the main agent graph. Order matters: history repair wraps every model call
    (outermost), then context management shapes what the model sees; approvals run after
    every model response before any tool executes, and `guards` (the repeated-call guard)
    just before them: LangChain runs after-model hooks last to first, so a call a guard
    answers is never asked about."""
    return create_agent(
        model=model,
        tools=list(tools),
        system_prompt=prompt or system_prompt(workspace_root),
        middleware=[
            HistoryRepairMiddleware(),
            *([context] if context is not None else []),
            approvals,
            *guards,
            *extra_middleware,
        ],
        checkpointer=checkpointer,
        name="invincat",
    )
