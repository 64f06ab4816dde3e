"""The planner agent: read-only investigation, a todo list, and `approve_plan`.

The allow-list is enforced twice: only allowed tools are given to the model (so other
schemas are never sent), and `PlannerGuardMiddleware` answers any other tool call the model
emits anyway with a tool error naming the allowed set, marked declined (`rejected` to the
user) — nothing executes, nobody is asked.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    hook_config,
)
from langchain.tools import InjectedState
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import Command

from invincat_server.runtime.agents.approval_middleware import ApprovalMiddleware
from invincat_server.runtime.agents.history_repair import HistoryRepairMiddleware
from invincat_server.runtime.agents.interaction import (
    InteractionMiddleware,
    Todo,
    as_dicts,
    ask_person,
    own_tool_request,
)
from invincat_server.runtime.events import ApprovalRequested
from invincat_server.runtime.tool_outcome import declined

PLANNER_TOOLS = (
    "read_file",
    "ls",
    "glob",
    "grep",
    "web_fetch",
    "write_todos",
    "ask_user",
    "approve_plan",
)


DRIFT_NUDGE = (
    "You ended your turn without a plan the user could approve. In plan mode you must not "
    "do the work yourself. Answer now with the plan itself, as the JSON object "
    '{"todos": [{"content": "<one step>", "status": "pending"}, ...]} '
    "and nothing else. Each step names its file and says exactly what to change there, with "
    "the code to add or replace when you have worked it out: the main agent that does the "
    "work sees only these steps."
)
"""Sent when the planner ended without `approve_plan`. The answer to it is offered no tool
and asked for the plan's JSON (PLAN_OUTPUT), which becomes the approve_plan call
(PlannerGuardMiddleware): Qwen2.5-Coder-1.5B, offered its read-only tools again, echoed its
prompt's context block instead (bench runs 12-13), and offered approve_plan alone answered
in prose (runs 15-16). The steps carry the code: Qwen2.5-Coder-1.5B wrote the right cli.py
in its drifting answer, then planned "Add the --verbose flag to the cli.py script", and the
executor, seeing only that, wrote `ArgumentParser(verbosity=...)` (bench run 27)."""


PLAN_OUTPUT = {
    "type": "json_schema",
    "json_schema": {
        "name": "plan",
        "schema": {
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 20,
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "minLength": 1, "maxLength": 300},
                            "status": {"type": "string", "enum": ["pending"]},
                        },
                        "required": ["content", "status"],
                        "additionalProperties": False,
                    },
                }
            },
            "required": ["todos"],
            "additionalProperties": False,
        },
    },
}
"""`response_format` of the answer to DRIFT_NUDGE: llama.cpp, Ollama and vLLM then decode
only a plan of this shape."""


def _as_plan_call(message: Any) -> Any:
    """An answer to DRIFT_NUDGE that is the plan's JSON (`{"todos": [...]}`), as the
    approve_plan call it stands for; any other message as it is."""
    if not isinstance(message, AIMessage) or message.tool_calls:
        return message
    try:
        value = json.loads(message.text.strip())
    except (ValueError, RecursionError):
        return message  # prose (a server that ignored the format): the drift stands
    todos = value.get("todos") if isinstance(value, dict) else None
    if not isinstance(todos, list) or not todos:
        return message
    call_id = f"call_{uuid.uuid4().hex[:24]}"
    call = ToolCall(name="approve_plan", args={"todos": todos}, id=call_id, type="tool_call")
    return message.model_copy(update={"tool_calls": [call]})


class PlanState(AgentState):
    plan: NotRequired[dict[str, Any]]
    todos: NotRequired[list[dict[str, Any]]]


def numbered(todos: Sequence[dict[str, Any]]) -> str:
    return "\n".join(f"{i}. {t['content']}" for i, t in enumerate(todos, start=1))


def planner_prompt(workspace_root: str) -> str:
    return (
        "You are Invincat's planner, working on the project at "
        f"{workspace_root}. You do not change anything: investigate with read-only tools "
        "(read_file, ls, glob, grep), ask the user with ask_user if something essential is "
        "unclear, then call approve_plan with the plan: ordered steps, each naming its file "
        "and saying exactly what to change there, with the code to add or replace when you "
        "have worked it out (the main agent that does the work sees only the steps). "
        "After the user approves, stop: the main agent executes the plan. If the user asks "
        "for changes, revise the plan and call approve_plan again."
    )


def _same_list(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]) -> bool:
    return [str(t.get("content", "")).strip() for t in a] == [
        str(t.get("content", "")).strip() for t in b
    ]


def make_approve_plan(*, headless: bool) -> BaseTool:
    """`approve_plan`; headless sessions (`--yes`) approve without asking."""

    @tool(
        "approve_plan",
        description=(
            "Ask the user to approve the plan: its steps, in order. The user approves, "
            "rejects, or asks for changes."
        ),
    )
    def approve_plan(
        todos: list[Todo],
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[dict[str, Any], InjectedState],
    ) -> Command[Any] | str:
        # Nothing of a plan is done yet, whatever status the planner wrote: an approved step
        # marked completed was skipped by the executor (Qwen2.5-Coder-1.5B, bench run 17).
        items = [{**item, "status": "pending"} for item in as_dicts(todos)]
        if not items:
            return "Error: the plan is empty. Call approve_plan with the plan's steps."
        # The list shown for approval is the plan, whatever write_todos said before: a
        # small model that skips write_todos or rewords a step is not sent round again, and
        # the user approves exactly what the main agent then gets.
        wrote = _same_list(items, state.get("todos") or [])
        if not wrote:
            get_stream_writer()({"type": "todos", "items": items})
        plan = dict(state.get("plan") or {})
        request = own_tool_request(
            "plan",
            tool_call_id,
            tool_name="approve_plan",
            args={"todos": items},
            description="Approve this plan?",
            agent="planner",
            todos=items,
        )
        if headless:
            decision: dict[str, Any] = {"type": "approve"}
        else:
            decision = ask_person(request)
        kind = decision.get("type")
        if kind == "approve":
            plan.update(status="approved", todos=items)
            note = "The user approved the plan. Stop now: the main agent will execute it."
        elif kind == "refine":
            feedback = str(decision.get("feedback") or "").strip()
            plan.update(status="refining", refinements=[*plan.get("refinements", []), feedback])
            note = (
                f"The user did not approve the plan and asked for changes: {feedback}\n"
                f"The plan they did not approve:\n{numbered(items)}\n"
                "Revise it and call approve_plan with the new list."
            )
        else:
            message = str(decision.get("message") or "").strip()
            plan.update(status="rejected", todos=items)
            note = (
                "The user rejected the plan" + (f": {message}" if message else ".") + "\n"
                f"The rejected plan:\n{numbered(items)}\nDo not execute anything."
            )
        return Command(
            update={
                "plan": plan,
                **({} if wrote else {"todos": items}),
                "messages": [ToolMessage(note, tool_call_id=tool_call_id, name="approve_plan")],
            }
        )

    return approve_plan


class PlannerApprovalMiddleware(ApprovalMiddleware):
    """The approval layer for the planner's approval-gated tools (`web_fetch`): requests
    are marked `agent="planner"` so a decision taken after a restart resumes the planner."""

    def _request(
        self, thread_id: str, message_id: str, call: dict[str, Any]
    ) -> ApprovalRequested | None:
        if call["name"] == "approve_plan":
            return None  # it asks the user itself (a plan approval)
        request = super()._request(thread_id, message_id, call)
        return None if request is None else request.model_copy(update={"agent": "planner"})


class PlannerGuardMiddleware(AgentMiddleware):
    """Refuses tool calls outside the allow-list and ends the run once the plan is decided;
    the answer to DRIFT_NUDGE is asked for the plan's JSON and made an approve_plan call."""

    state_schema = PlanState

    def __init__(self, allowed: Sequence[str]) -> None:
        super().__init__()
        self.allowed = tuple(allowed)

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        last = request.messages[-1] if request.messages else None
        if not (isinstance(last, HumanMessage) and last.content == DRIFT_NUDGE):
            return await handler(request)
        if not any(getattr(t, "name", None) == "approve_plan" for t in request.tools):
            return await handler(request)
        # No tool, and the answer constrained to the plan's JSON where the server can:
        # offered approve_plan alone, Qwen2.5-Coder-1.5B still answered in prose 5 times
        # of 6 (bench runs 15-16). The plan becomes an approve_plan call, asked as ever.
        settings = {**request.model_settings, "response_format": PLAN_OUTPUT}
        response = await handler(request.override(tools=[], model_settings=settings))
        return ModelResponse(
            result=[_as_plan_call(m) for m in response.result],
            structured_response=response.structured_response,
        )

    @hook_config(can_jump_to=["end"])
    async def abefore_model(  # type: ignore[override]  # state_schema is PlanState
        self, state: PlanState, runtime: Runtime
    ) -> dict[str, Any] | None:
        if (state.get("plan") or {}).get("status") in ("approved", "rejected"):
            return {"jump_to": "end"}
        return None

    async def aafter_model(  # type: ignore[override]  # state_schema is PlanState
        self, state: PlanState, runtime: Runtime
    ) -> dict[str, Any] | None:
        last = state["messages"][-1] if state["messages"] else None
        if not isinstance(last, AIMessage):
            return None
        refused = [c for c in last.tool_calls if c["name"] not in self.allowed]
        if not refused:
            return None
        plan = dict(state.get("plan") or {})
        plan["violations"] = int(plan.get("violations", 0)) + len(refused)
        allowed = ", ".join(self.allowed)
        return {
            "plan": plan,
            "messages": [
                declined(
                    f"Error: `{c['name']}` is not available in plan mode; nothing was executed. "
                    f"The planner can only use: {allowed}. Propose the change as a step of the "
                    "plan (approve_plan) instead of doing it.",
                    tool_call_id=c["id"],
                    name=c["name"],
                )
                for c in refused
            ],
        }


def build_planner_agent(
    *,
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    checkpointer: BaseCheckpointSaver | None,
    workspace_root: str,
    headless: bool,
    approvals: PlannerApprovalMiddleware | None = None,
    guard: AgentMiddleware | None = None,
    extra_middleware: Sequence[AgentMiddleware] = (),
    repeats: AgentMiddleware | None = None,
) -> Any:
    """`approvals` asks before allowed tools that the policy does not let run freely
    (`web_fetch`). It is listed before the guard so the guard's after-model hook runs first:
    refused calls are answered, and only the calls it lets through are asked about.
    `repeats` (the repeated-call guard) sits between them: it sees the guard's refusals as
    answered and answers its own before approvals ask.
    `extra_middleware` comes last: its model-call wrappers are the innermost."""
    read_only = [t for t in tools if t.name in PLANNER_TOOLS]
    allowed = [t.name for t in read_only] + ["write_todos", "ask_user", "approve_plan"]
    return create_agent(
        model=model,
        tools=[*read_only, make_approve_plan(headless=headless)],
        system_prompt=planner_prompt(workspace_root),
        middleware=[
            HistoryRepairMiddleware(),
            InteractionMiddleware(headless=headless, agent="planner"),
            *([approvals] if approvals is not None else []),
            *([repeats] if repeats is not None else []),
            PlannerGuardMiddleware(allowed),
            *([guard] if guard is not None else []),
            *extra_middleware,
        ],
        checkpointer=checkpointer,
        name="invincat-planner",
    )
