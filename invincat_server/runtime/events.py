"""Typed events a turn emits. Front ends render these; `--json` prints them verbatim.

Every event serialises to an object with a `type` field (see docs/protocol.md). The core
never emits anything a front end must interpret through agent internals.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, model_validator

from invincat_server.runtime.tool_phrases import Phrase, phrase
from invincat_server.runtime.tool_summary import result_summary


def _worded(
    done: tuple[str, dict[str, Any], Phrase] | None, name: str, args: dict[str, Any]
) -> tuple[str, dict[str, Any], Phrase]:
    """The phrase of a call, worded (redacted, cut) once when its event is made; again
    only for a copy made with other arguments (`model_copy(update=…)` runs no
    validator: an edited call's request, runtime/edited_call.py)."""
    if done is not None and done[0] == name and done[1] is args:
        return done
    return (name, args, phrase(name, args))


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class TurnStart(_Event):
    type: Literal["turn_start"] = "turn_start"
    thread_id: str
    turn_id: str


class MessageDelta(_Event):
    type: Literal["message_delta"] = "message_delta"
    text: str


class ToolCall(_Event):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    args: dict[str, Any]
    depth: int = 0
    """0: the agent the user talks to; 1: a subagent it started with `task`; 2: …"""
    summary: str = ""
    """One short human line ("Read src/app.py"): the call's title in the phrase book
    (runtime/tool_phrases.py), filled in from name and args when empty."""
    _words: tuple[str, dict[str, Any], Phrase] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _summarise(self) -> ToolCall:
        # Computed here, once, so every front end shows the same words.
        if not self.summary:
            self.summary = self.words.title
        return self

    @property
    def words(self) -> Phrase:
        """The call in the phrase book: title, progressive ("Running `pytest`", the
        terminal's status line and LSP `$/progress`) and ACP kind. Not serialised."""
        self._words = _worded(self._words, self.name, self.args)
        return self._words[2]


class ToolResult(_Event):
    type: Literal["tool_result"] = "tool_result"
    id: str
    name: str
    status: Literal["success", "error", "rejected"]
    content: str
    depth: int = 0
    """As for `tool_call`: non-zero for a subagent's own tool calls."""
    summary: str = ""
    """The result's first line and how many follow; filled in from content when empty."""

    @model_validator(mode="after")
    def _summarise(self) -> ToolResult:
        if not self.summary:
            self.summary = result_summary(self.content)
        return self


class AlwaysOption(BaseModel):
    """One 'approve always' choice, worded as exactly what will be remembered."""

    scope: Literal["session", "workspace"]
    label: str
    tool: str
    command_prefix: str | None = None


class DenyOption(BaseModel):
    """The 'reject always' choice of a tool call: reject it, and reject the calls `tool`
    and `command_prefix` describe for the rest of this session (runtime/policy/deny_rules.py)."""

    scope: Literal["session"] = "session"
    label: str
    tool: str
    command_prefix: str | None = None


class ToolOutput(_Event):
    """Output of a running `execute` call as it arrives: whole lines of merged
    stdout/stderr, coalesced (a few events a second at most). Lines the `tool_result` would
    withhold are withheld here too. The `tool_result` still carries the (capped) output."""

    type: Literal["tool_output"] = "tool_output"
    id: str
    """The tool call id (as in `tool_call`)."""
    text: str
    depth: int = 0


class ApprovalRequested(_Event):
    type: Literal["approval_requested"] = "approval_requested"
    approval_id: str
    kind: Literal["tool", "plan", "question"] = "tool"
    thread_id: str
    tool_call_id: str | None = None
    tool_name: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    description: str = ""
    path: str | None = None
    diff: str | None = None
    proposed_text: str | None = None
    always_options: list[AlwaysOption] = Field(default_factory=list)
    always_unavailable: str | None = None
    """For a tool call offered no `always_options`: why no rule may cover it."""
    deny_option: DenyOption | None = None
    """For a tool call: the 'reject always (this session)' choice (decision `reject_always`)."""
    todos: list[dict[str, Any]] | None = None
    """For `kind: "plan"`: the proposed todo list."""
    questions: list[dict[str, Any]] | None = None
    """For `kind: "question"`: `[{question, options?}]`."""
    agent: Literal["main", "planner"] = "main"
    """Which agent asked (a resumed plan approval continues in the planner)."""
    _words: tuple[str, dict[str, Any], Phrase] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _word(self) -> ApprovalRequested:
        if self.kind == "tool":
            self._words = _worded(None, self.tool_name or "", self.args)
        return self

    @property
    def words(self) -> Phrase:
        """For a tool call: the call in the phrase book (ACP's permission title and
        kind), as its `tool_call` event words it. Not serialised."""
        self._words = _worded(self._words, self.tool_name or "", self.args)
        return self._words[2]


class ApprovalResolved(_Event):
    type: Literal["approval_resolved"] = "approval_resolved"
    approval_id: str
    decision: str
    remembered: str | None = None


class Todos(_Event):
    type: Literal["todos"] = "todos"
    items: list[dict[str, Any]]


class MemoryUpdating(_Event):
    type: Literal["memory_updating"] = "memory_updating"


class MemoryChanged(_Event):
    type: Literal["memory_changed"] = "memory_changed"
    scope: str
    batch_id: str


class MemoryIdle(_Event):
    """The memory work that followed a turn is over (after `memory_updating`), whether or
    not it changed anything: front ends clear their "memory updating" indicator."""

    type: Literal["memory_idle"] = "memory_idle"
    changed: bool = False


class ContextUsage(_Event):
    type: Literal["context_usage"] = "context_usage"
    tokens: int
    limit: int
    compacted: bool = False
    """True when this reports an auto-compaction or offload; `tokens_before` is then set."""
    tokens_before: int | None = None


class Error(_Event):
    type: Literal["error"] = "error"
    message: str


class TurnEnd(_Event):
    type: Literal["turn_end"] = "turn_end"
    status: Literal["completed", "cancelled", "failed"]
    thread_id: str
    turn_id: str


Event = Annotated[
    TurnStart
    | MessageDelta
    | ToolCall
    | ToolResult
    | ToolOutput
    | ApprovalRequested
    | ApprovalResolved
    | Todos
    | MemoryUpdating
    | MemoryChanged
    | MemoryIdle
    | ContextUsage
    | Error
    | TurnEnd,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: dict[str, Any]) -> Event:
    """Validate a serialised event (used by clients and tests)."""
    return EVENT_ADAPTER.validate_python(data)
