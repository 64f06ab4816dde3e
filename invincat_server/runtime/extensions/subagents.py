"""Local subagents: the `task(description, subagent_type)` tool.

A subagent is a `create_agent` graph with its own prompt and a subset of the tools. It runs
*inside* the `task` tool call, under the parent's runnable config, so:

- it shares the parent's checkpointer (compiled without one, LangGraph hands it the
  parent's) and gets its own checkpoint namespace per tool call (each tool call is its own
  LangGraph task), so two `task` calls never collide;
- its tool calls pass the same `ApprovalMiddleware` class, policy, workspace and document
  source as the main agent's. Approving `task` approves starting the subagent, nothing
  more: a `write_file` it proposes raises its own `interrupt()`, which bubbles up to the
  parent graph; the turn asks the person like any other approval, and resuming re-enters
  the `task` tool, which resumes the subagent from its checkpoint;
- `SubagentGuardMiddleware` (which runs before the approvals) refuses tools outside the
  subagent's allow-list, `task` past the nesting limit, and calls past the tool-call limit.

Limits (docs/extensions.md): subagents nest at most `max_depth` levels (default 2: the main
agent's subagent may start one more level) and each subagent run makes at most
`max_tool_calls` tool calls (default 25); override with `INVINCAT_SUBAGENT_MAX_DEPTH` /
`INVINCAT_SUBAGENT_MAX_TOOL_CALLS` or the session options of the same names in lower case.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from invincat_server.runtime.tool_outcome import declined
from invincat_server.runtime.tools.files import make_tool

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from invincat_server.runtime.agents.approval_middleware import ApprovalMiddleware
    from invincat_server.runtime.extensions import ExtensionContext, Extensions

DEFAULT_MAX_DEPTH = 2
DEFAULT_MAX_TOOL_CALLS = 25
# Bounds on what a configuration may ask for: deeper nesting or longer runs make a single
# approved `task` too hard for a person to follow.
MAX_ALLOWED_DEPTH = 5
MAX_ALLOWED_TOOL_CALLS = 200
MAX_REPORT_CHARS = 20_000


@dataclass(frozen=True)
class SubagentLimits:
    max_depth: int = DEFAULT_MAX_DEPTH
    """Nesting levels: the main agent's subagents are level 1."""
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    """Tool calls one subagent run may make (refused ones count too)."""


@dataclass(frozen=True)
class SubagentType:
    name: str
    summary: str
    """What the main agent is told this subagent is for."""
    tools: tuple[str, ...]
    """Tool names it may use (those that exist in this session)."""
    instructions: str
    can_delegate: bool = False
    """Whether it gets `task` itself (below the nesting limit)."""


SUBAGENT_TYPES: dict[str, SubagentType] = {
    "explorer": SubagentType(
        name="explorer",
        summary=(
            "read-only investigation: finds, reads and searches files and reports what it "
            "found. It cannot change files or run commands."
        ),
        tools=("read_file", "ls", "glob", "grep", "web_fetch", "load_skill"),
        instructions=(
            "You are read-only: you cannot write or edit files or run commands. If something "
            "should change, say exactly what in your report."
        ),
    ),
    "worker": SubagentType(
        name="worker",
        summary=(
            "carries out a self-contained change: reads, writes and edits files and runs "
            "shell commands (each write and command is shown to the user for approval)."
        ),
        tools=(
            "read_file",
            "write_file",
            "edit_file",
            "ls",
            "glob",
            "grep",
            "execute",
            "web_fetch",
            "load_skill",
        ),
        instructions=(
            "Writes and shell commands are shown to the user for approval. If the user "
            "rejects a call, do not retry it unchanged: report what was rejected."
        ),
        can_delegate=True,
    ),
}


def limits_from(
    options: Mapping[str, Any], env: Mapping[str, str], notify: Callable[[str], None]
) -> SubagentLimits:
    """Session options win over the environment, which wins over the defaults."""

    def pick(key: str, default: int, ceiling: int) -> int:
        source = key if key in options else f"INVINCAT_{key.upper()}"
        raw = options.get(key, env.get(source))
        if raw in (None, ""):
            return default
        try:
            value = int(raw)
        except (TypeError, ValueError):
            value = 0
        if not 1 <= value <= ceiling:
            notify(
                f"{source} must be a whole number from 1 to {ceiling}, got {raw!r}; "
                f"using {default}."
            )
            return default
        return value

    return SubagentLimits(
        max_depth=pick("subagent_max_depth", DEFAULT_MAX_DEPTH, MAX_ALLOWED_DEPTH),
        max_tool_calls=pick(
            "subagent_max_tool_calls", DEFAULT_MAX_TOOL_CALLS, MAX_ALLOWED_TOOL_CALLS
        ),
    )


class SubagentState(AgentState):
    subagent_tool_calls: NotRequired[int]
    subagent_stopped: NotRequired[bool]


class SubagentGuardMiddleware(AgentMiddleware):
    """Refuses calls outside the allow-list, `task` past the nesting limit, and calls past
    the tool-call budget; after the budget is spent and the model still calls tools, it
    ends the run. Listed after `ApprovalMiddleware`, so it runs first after each model
    response: nothing it refuses is ever offered for approval."""

    state_schema = SubagentState

    def __init__(
        self, kind: SubagentType, allowed: Sequence[str], level: int, limits: SubagentLimits
    ):
        super().__init__()
        self.kind = kind
        self.allowed = tuple(allowed)
        self.level = level
        self.limits = limits

    def _refusal(self, call: dict[str, Any], used: int) -> str | None:
        name = call["name"]
        if name == "task" and self.kind.can_delegate and name not in self.allowed:
            return (
                "Error: `task` is not available here; nothing ran. Subagents nest at most "
                f"{self.limits.max_depth} levels deep and this {self.kind.name} subagent is at "
                f"level {self.level}. Do the work with your own tools, or report what is left."
            )
        if name not in self.allowed:
            return (
                f"Error: `{name}` is not available to the {self.kind.name} subagent; nothing "
                f"ran. Its tools are: {', '.join(self.allowed)}. {self.kind.instructions}"
            )
        if used >= self.limits.max_tool_calls:
            return (
                f"Error: tool-call limit reached; this {name} call did not run. A subagent "
                f"may make at most {self.limits.max_tool_calls} tool calls per task. Stop "
                "calling tools and write your final report now."
            )
        return None

    @hook_config(can_jump_to=["end"])
    async def aafter_model(  # type: ignore[override]  # state_schema is SubagentState
        self, state: SubagentState, runtime: Runtime
    ) -> dict[str, Any] | None:
        last = state["messages"][-1] if state["messages"] else None
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return None
        used = int(state.get("subagent_tool_calls", 0))
        # Past the budget already means it was warned (a refused call) and called again.
        stop = used > self.limits.max_tool_calls
        refusals: list[ToolMessage] = []
        for call in last.tool_calls:
            # Every emitted call counts, refused or not, so a model stuck repeating a
            # forbidden call still runs out of budget.
            reason = self._refusal(dict(call), used)
            used = min(used + 1, self.limits.max_tool_calls + 1)
            if reason is not None:
                refusals.append(declined(reason, tool_call_id=call["id"], name=call["name"]))
        update: dict[str, Any] = {"subagent_tool_calls": used}
        if refusals:
            update["messages"] = refusals
        if stop:
            # It was told to stop and called tools again: end here, every call answered.
            update["subagent_stopped"] = True
            update["jump_to"] = "end"
        return update


class TaskArgs(BaseModel):
    description: str = Field(
        description=(
            "The complete task for the subagent: what to do, where, and what to report. It "
            "sees nothing of this conversation, so include every detail it needs."
        )
    )
    subagent_type: Literal["explorer", "worker"] = Field(
        description="explorer (read-only investigation) or worker (changes files, runs commands)."
    )


def _report(kind: str, result: Mapping[str, Any], limits: SubagentLimits) -> str:
    text = ""
    for message in reversed(result.get("messages") or []):
        if isinstance(message, AIMessage):
            text = message.text.strip()
            break
    if result.get("subagent_stopped"):
        note = (
            f"[The {kind} subagent was stopped: it reached its limit of "
            f"{limits.max_tool_calls} tool calls.]"
        )
        text = f"{note}\n{text}" if text else note
    if not text:
        text = f"(The {kind} subagent finished without a report.)"
    if len(text) > MAX_REPORT_CHARS:
        text = text[:MAX_REPORT_CHARS] + f"\n… [report cut at {MAX_REPORT_CHARS} characters]"
    return text


class SubagentFactory:
    """Builds (once) the subagent graph for each type and nesting level."""

    def __init__(
        self,
        *,
        model: BaseChatModel,
        tools: Callable[[], Sequence[BaseTool]],
        approvals: ApprovalMiddleware,
        limits: SubagentLimits,
        workspace_root: str,
        tool_guards: Sequence[AgentMiddleware] = (),
        answer_readers: Sequence[AgentMiddleware] = (),
    ) -> None:
        self.model = model
        self.tools = tools
        self.approvals = approvals
        self.tool_guards = list(tool_guards)
        self.answer_readers = list(answer_readers)
        self.limits = limits
        self.workspace_root = workspace_root
        self._graphs: dict[tuple[str, int], Any] = {}

    def prompt(self, kind: SubagentType, level: int) -> str:
        return (
            f"You are Invincat's {kind.name} subagent (level {level} of at most "
            f"{self.limits.max_depth}), working in the project at {self.workspace_root}. "
            "The main agent gave you one task. Do it with your tools; paths are relative to "
            "the project root. "
            f"{kind.instructions} You may make at most {self.limits.max_tool_calls} tool "
            "calls. Finish with a concise report: what you found or changed, and anything "
            "left undone. The report is all the main agent sees."
        )

    def graph(self, kind_name: str, level: int) -> Any:
        key = (kind_name, level)
        if key not in self._graphs:
            from langchain.agents import create_agent

            from invincat_server.runtime.agents.history_repair import HistoryRepairMiddleware

            kind = SUBAGENT_TYPES[kind_name]
            available = {t.name: t for t in self.tools()}
            tools = [available[name] for name in kind.tools if name in available]
            if kind.can_delegate and level < self.limits.max_depth:
                tools.append(make_task_tool(self, level))
            allowed = [t.name for t in tools]
            # No checkpointer: nested in the `task` tool, LangGraph gives the subagent the
            # parent's, under the tool call's own namespace (so interrupts can resume it).
            self._graphs[key] = create_agent(
                model=self.model,
                tools=tools,
                system_prompt=self.prompt(kind, level),
                middleware=[
                    HistoryRepairMiddleware(),
                    self.approvals,
                    SubagentGuardMiddleware(kind, allowed, level, self.limits),
                    *self.tool_guards,
                    *self.answer_readers,  # last: innermost around the model call
                ],
                name=f"invincat-{kind_name}",
            )
        return self._graphs[key]

    async def run(self, kind_name: str, description: str, level: int) -> str:
        from langchain_core.messages import HumanMessage

        graph = self.graph(kind_name, level)
        # Each tool call is a model step plus a tools step (plus middleware nodes); leave
        # room so the tool-call budget, not the recursion limit, is what stops a run.
        config = {"recursion_limit": 8 * self.limits.max_tool_calls + 20}
        result = await graph.ainvoke({"messages": [HumanMessage(content=description)]}, config)
        return _report(kind_name, result, self.limits)


def make_task_tool(factory: SubagentFactory, level: int) -> BaseTool:
    """`task` for an agent at nesting `level` (0 = the main agent)."""

    async def task(description: str, subagent_type: str) -> str:
        if subagent_type not in SUBAGENT_TYPES:
            raise ToolException(
                f"Unknown subagent_type {subagent_type!r}; use one of: " + ", ".join(SUBAGENT_TYPES)
            )
        if level >= factory.limits.max_depth:
            raise ToolException(
                f"Subagents nest at most {factory.limits.max_depth} levels deep; this agent is "
                f"at level {level}. Do the work yourself."
            )
        if not description.strip():
            raise ToolException("description is empty: say what the subagent should do.")
        return await factory.run(subagent_type, description, level + 1)

    kinds = "; ".join(f"{k.name}: {k.summary}" for k in SUBAGENT_TYPES.values())
    return make_tool(
        "task",
        (
            "Delegate a self-contained task to a subagent and get its final report back. "
            f"Types — {kinds}. The subagent starts fresh: describe the task completely."
        ),
        TaskArgs,
        task,
    )


def prompt_section(limits: SubagentLimits) -> str:
    kinds = "\n".join(f"- {k.name}: {k.summary}" for k in SUBAGENT_TYPES.values())
    return (
        "## Subagents\n"
        "task(description, subagent_type) hands a self-contained piece of work to a "
        "subagent and returns its report. Use it for broad investigations (explorer) or "
        "isolated changes (worker), not for small steps you can do directly.\n"
        f"{kinds}\n"
        f"Each subagent makes at most {limits.max_tool_calls} tool calls; subagents nest at "
        f"most {limits.max_depth} levels."
    )


async def subagents_provider(ctx: ExtensionContext, ext: Extensions) -> None:
    """Adds `task` (local subagents) to the main agent."""
    from invincat_server.runtime.agents.approval_middleware import ApprovalMiddleware

    limits = limits_from(ctx.options, os.environ, ctx.notify)
    factory = SubagentFactory(
        model=ctx.model,
        # Read lazily: providers after this one (web_fetch, skills) add tools subagents use.
        tools=lambda: [*ctx.core_tools, *ext.tools],
        approvals=ApprovalMiddleware(ctx.policy, ctx.workspace, ctx.documents),
        tool_guards=list(ctx.tool_guards),
        answer_readers=list(ctx.answer_readers),
        limits=limits,
        workspace_root=str(ctx.workspace.root),
    )
    ext.tools.append(make_task_tool(factory, 0))
    ext.prompt_sections.append(prompt_section(limits))
