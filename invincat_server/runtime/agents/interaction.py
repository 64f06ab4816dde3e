"""Tools that involve the user or track progress: `write_todos` and `ask_user`.

Both agents (planner and main) get them. `write_todos` keeps the list in the `todos` state
key and reports it as a `todos` event; `ask_user` pauses the graph with a `question`
interrupt (checkpointed like a tool approval) and returns the answers to the model.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.tools import InjectedState
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.config import get_config, get_stream_writer
from langgraph.types import Command, interrupt
from pydantic import BaseModel, Field

from invincat_server.runtime.events import ApprovalRequested
from invincat_server.runtime.tool_traits import RUNS_COMMANDS, WRITES_FILES

_NS = uuid.UUID("0c5e7f55-6f6e-4b44-9e0b-6a3c1d2f9a10")
HEADLESS_ANSWER = "(no answer: headless)"
CANCELLED_ANSWER = "(cancelled)"


class Todo(BaseModel):
    content: str = Field(description="What to do, as one short imperative sentence.")
    status: Literal["pending", "in_progress", "completed"] = Field(
        default="pending", description="pending, in_progress (one at a time) or completed."
    )


class Question(BaseModel):
    question: str = Field(description="The question, self-contained.")
    options: list[str] | None = Field(
        default=None, description="Choices for a multiple-choice question; omit for free text."
    )


def _latest_list(
    _before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each write_todos replaces the whole list, so of two in one model response (small
    models send them) the later call's list is the list; without a reducer LangGraph fails
    the turn with InvalidUpdateError ("Can receive only one value per step")."""
    return after


class InteractionState(AgentState):
    todos: NotRequired[Annotated[list[dict[str, Any]], _latest_list]]


def user_thread_id() -> str:
    """The user's thread id (the planner runs under its own checkpoint key)."""
    configurable = get_config().get("configurable", {})
    return str(configurable.get("invincat_thread") or configurable.get("thread_id", ""))


def ask_person(request: ApprovalRequested) -> dict[str, Any]:
    """Pause the graph for one decision on `request` (a checkpointed interrupt that
    survives a restart) and return the decision the person took."""
    answer = interrupt(
        {
            "kind": request.kind,
            "batch_id": request.approval_id,
            "requests": [request.to_json_dict()],
        }
    )
    return dict(answer["decisions"].get(request.tool_call_id or "", {}))


def request_id(kind: str, tool_call_id: str) -> str:
    return f"{kind[:2]}_" + uuid.uuid5(_NS, f"{user_thread_id()}/{kind}/{tool_call_id}").hex[:16]


def own_tool_request(
    kind: Literal["plan", "question"],
    tool_call_id: str,
    *,
    tool_name: str,
    args: dict[str, Any],
    description: str,
    agent: Literal["main", "planner"],
    **details: Any,
) -> ApprovalRequested:
    """The request one of the agents' own tools (`ask_user`, `approve_plan`) puts to the
    user: in the user's thread, with an id that stays the same when the graph replays the
    call on resume. `details`: the kind's own fields (`questions`, `todos`)."""
    return ApprovalRequested(
        approval_id=request_id(kind, tool_call_id),
        kind=kind,
        thread_id=user_thread_id(),
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        args=args,
        description=description,
        agent=agent,
        **details,
    )


def as_dicts(items: Sequence[BaseModel | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A tool's list argument as plain dicts (state and events hold dicts): a call the
    schema validated brings pydantic models, a direct call may bring dicts."""
    return [item.model_dump() if isinstance(item, BaseModel) else dict(item) for item in items]


def next_step(items: Sequence[Mapping[str, Any]]) -> str:
    """What the list says to do now. Small models otherwise write the same list again and
    again (bench/README.md): the result names the step to work on with the other tools."""
    current = [t for t in items if t.get("status") == "in_progress"]
    pending = [t for t in items if t.get("status") == "pending"]
    if current or pending:
        step = (current or pending)[0]
        return f"Now do this step with the other tools: {step.get('content', '')}"
    return "Every item is completed: answer the user." if items else ""


NOTHING_CHANGED_YET = (
    "No file has been changed and no command run in this turn yet: an item that needs a "
    "change is not done until edit_file, write_file or execute has made it. Make it now, or, "
    "if nothing needed changing, answer the user."
)
"""Said instead of "Every item is completed" when an item was just marked completed and
nothing changed anything this turn: Qwen2.5-Coder-1.5B, executing an approved plan, marked
its one step completed beside a refused write, or with nothing but prose, and the turn
ended with no change (bench runs 26-27)."""
CHANGING_TOOLS = WRITES_FILES | RUNS_COMMANDS


def _newly_completed(items: Sequence[Mapping[str, Any]], before: Sequence[Any]) -> bool:
    already = {
        str(t.get("content", "")).strip()
        for t in before
        if isinstance(t, Mapping) and t.get("status") == "completed"
    }
    return any(
        t.get("status") == "completed" and str(t.get("content", "")).strip() not in already
        for t in items
    )


def _changed_this_turn(messages: Sequence[Any]) -> bool:
    """Whether, since the turn's request, a changing tool succeeded or the answer that
    called write_todos also calls one (its result is not in the state yet)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return False
        if isinstance(message, AIMessage) and message is messages[-1]:
            if any(c["name"] in CHANGING_TOOLS for c in message.tool_calls):
                return True
        elif isinstance(message, ToolMessage) and message.name in CHANGING_TOOLS:
            if message.status != "error":
                return True
    return False


@tool(
    "write_todos",
    description=(
        "Replace the todo list for the current task. Use it to plan multi-step work and to "
        "track progress: mark an item in_progress when you start it and completed when done."
    ),
)
def write_todos(
    todos: list[Todo],
    tool_call_id: Annotated[str, InjectedToolCallId],
    state: Annotated[dict[str, Any], InjectedState],
) -> Command[Any]:
    items = as_dicts(todos)
    get_stream_writer()({"type": "todos", "items": items})
    done = sum(1 for t in items if t["status"] == "completed")
    said = next_step(items)
    if _newly_completed(items, state.get("todos") or []) and not _changed_this_turn(
        state.get("messages") or []
    ):
        said = NOTHING_CHANGED_YET
    return Command(
        update={
            "todos": items,
            "messages": [
                ToolMessage(
                    f"Todo list updated: {len(items)} items, {done} completed. {said}",
                    tool_call_id=tool_call_id,
                    name="write_todos",
                )
            ],
        }
    )


def make_ask_user(*, headless: bool, agent: Literal["main", "planner"]) -> Any:
    @tool(
        "ask_user",
        description=(
            "Ask the user one or more questions when you cannot proceed without their input "
            "(free text, or multiple choice with options). Returns their answers."
        ),
    )
    def ask_user(
        questions: list[Question], tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> str:
        asked = as_dicts(questions)
        if headless:
            answers = [HEADLESS_ANSWER] * len(asked)
        else:
            request = own_tool_request(
                "question",
                tool_call_id,
                tool_name="ask_user",
                args={"questions": asked},
                description="The agent has a question"
                if len(asked) == 1
                else "The agent has questions",
                agent=agent,
                questions=asked,
            )
            decision = ask_person(request)
            if decision.get("type") == "answer":
                answers = [str(a) for a in decision.get("answers") or []]
            else:
                answers = [CANCELLED_ANSWER] * len(asked)
        lines = []
        for index, question in enumerate(asked):
            reply = answers[index] if index < len(answers) else CANCELLED_ANSWER
            lines.append(f"Q: {question['question']}\nA: {reply}")
        return "\n\n".join(lines)

    return ask_user


def _tool_name(tool: Any) -> str | None:
    name = tool.get("name") if isinstance(tool, Mapping) else getattr(tool, "name", None)
    return name if isinstance(name, str) else None


class InteractionMiddleware(AgentMiddleware):
    """Registers `write_todos` and `ask_user` and the `todos` state key, and offers them to
    the model after the tools that do the work."""

    state_schema = InteractionState

    def __init__(self, *, headless: bool, agent: Literal["main", "planner"]) -> None:
        super().__init__()
        self.headless = headless
        self.agent = agent
        self.tools = [write_todos, make_ask_user(headless=headless, agent=agent)]

    def offered(self, tools: Sequence[Any]) -> list[Any]:
        """`tools` as the model sees them: this middleware's own last, because small models
        reach for the first tools listed (Qwen2.5-Coder-1.5B opened its turns with
        write_todos and ask_user, bench/README.md); and no `ask_user` where nobody can
        answer (headless: its answer is always "(no answer: headless)"); and no
        `write_todos` for the planner, whose `approve_plan` carries the list (a small model
        wrote the list again and again and never proposed it). A call the model makes to
        one of them anyway still runs."""
        own = {t.name for t in self.tools}
        work = [t for t in tools if _tool_name(t) not in own]
        mine = [t for t in tools if _tool_name(t) in own]
        if self.headless:
            mine = [t for t in mine if _tool_name(t) != "ask_user"]
        if self.agent == "planner":
            mine = [t for t in mine if _tool_name(t) != "write_todos"]
        return [*work, *mine]

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        return await handler(request.override(tools=self.offered(request.tools)))
