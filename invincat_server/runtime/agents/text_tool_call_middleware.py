"""Tool calls a model wrote as text become structured calls, inside the model node.

It wraps the model call (the innermost wrapper, so it sees the tools finally offered for
this call and the model's own answer): when the answer carries no structured tool call,
its text is searched (runtime/text_tool_calls.py) and each call found is put on the
AIMessage as a structured call with a fresh id. Every after-model hook — approvals, the
planner's guard — and the tool node then see an ordinary call: nothing about a call's
origin changes what asks, what is sandboxed or what is protected.

A call found but unusable (a tool not offered, arguments that do not fit its schema) is
answered at once with an error result, in the same model-node update, so it never runs
and nobody is asked; the agent then goes back to the model with that error, as LangChain
does for a call whose result is already there. When every call of that answer was so
refused, the next answer is decoded under the offered tools' schemas (call_repair.py).

Only the model's answer is searched, never tool results or user text: a file that
contains `<tool_call>…` is read as data. The message keeps its text as written (the
thread's record) and says in `additional_kwargs[AUDIT_KEY]` what was found.

A model is shown such a message by its calls alone (`as_shown_to_models`): its text would
show every call twice, the second time in a form the model's template does not use, and
Qwen2.5-Coder-1.5B copied its own earlier answer, call text and all, into each next one
(bench run 10); the memory model copied a misnamed call's arguments as its operation.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage

from invincat_server.runtime.agents.call_repair import (
    ADVISED_KEY,
    CONSTRAINED_KEY,
    REPAIR_NOTE,
    WRITE_TOOLS,
    call_output,
    last_answer_constrained,
    needs_repair,
    unwritten_note,
    with_tool_list,
)
from invincat_server.runtime.editor_context import OPEN_TAG as CONTEXT_OPEN_TAG
from invincat_server.runtime.shown_files import is_quote, shown_files
from invincat_server.runtime.text_tool_calls import TextToolCalls, find_text_tool_calls

CurrentText = Callable[[str], "str | None"]
"""A project file's current text by the path a model wrote, None if it is not one (a
path outside the project or refused to tools, a directory, a binary or huge file)."""

AUDIT_KEY = "invincat_text_tool_calls"


_Message = TypeVar("_Message", bound=BaseMessage)


def as_shown_to_models(message: _Message) -> _Message:
    """`message` as a model is sent it: an answer whose calls were read from its text
    without its text, since the calls carry it; any other message as it is."""
    if (
        isinstance(message, AIMessage)
        and message.tool_calls
        and AUDIT_KEY in message.additional_kwargs
        and message.content
    ):
        return message.model_copy(update={"content": ""})
    return message


class OfferedTools(Mapping[str, "Mapping[str, Any] | None"]):
    """Offered tool name → its argument schema, computed only for a name looked up (most
    answers name no tool, and converting every tool costs)."""

    def __init__(self, tools: Sequence[Any]) -> None:
        self._tools = {name: t for t in tools if (name := _tool_name(t))}
        self._schemas: dict[str, Mapping[str, Any] | None] = {}

    def __getitem__(self, name: str) -> Mapping[str, Any] | None:
        if name not in self._schemas:
            self._schemas[name] = _schema(self._tools[name])
        return self._schemas[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)


def _tool_name(tool: Any) -> str | None:
    if isinstance(tool, dict):
        function = tool.get("function")
        name = function.get("name") if isinstance(function, dict) else tool.get("name")
        return name if isinstance(name, str) else None
    name = getattr(tool, "name", None)
    return name if isinstance(name, str) else None


def _schema(tool: Any) -> Mapping[str, Any] | None:
    """The arguments' JSON schema as the model was offered it (injected arguments such as
    the call id or the state are not in it)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    try:
        parameters = convert_to_openai_tool(tool).get("function", {}).get("parameters")
    except Exception:  # a tool we cannot describe is validated where it runs, as ever
        return None
    return parameters if isinstance(parameters, dict) else None


UnknownToolNote = Callable[[str], "str | None"]
"""What to add to the error of a call to a tool that is not offered, by its name."""


def with_text_tool_calls(
    message: AIMessage,
    tools: Sequence[Any],
    unknown_tool_note: UnknownToolNote | None = None,
    *,
    constrained: bool = False,
) -> list[BaseMessage]:
    """`message` with the calls written in its text made structured, followed by the
    error results of those that must not run; `[message]` when there are none.
    `constrained`: the answer was decoded under call_repair.call_output (so recorded)."""
    if message.tool_calls or message.invalid_tool_calls:
        return [message]
    offered = OfferedTools(tools)
    found = find_text_tool_calls(message.text, offered)
    if not found.calls:
        return [message]
    calls: list[ToolCall] = []
    errors: list[BaseMessage] = []
    advised: list[str] = []
    for call in found.calls:
        call_id = f"call_{uuid.uuid4().hex[:24]}"
        calls.append(ToolCall(name=call.name, args=call.args, id=call_id, type="tool_call"))
        if call.error is not None:
            note = unknown_tool_note(call.name) if unknown_tool_note else None
            extra = f" {note}" if note and call.name not in offered else ""
            if extra:
                advised.append(call_id)
            errors.append(
                ToolMessage(
                    content=f"Error: {call.error}. Nothing ran.{extra}",
                    tool_call_id=call_id,
                    name=call.name,
                    status="error",
                )
            )
    audit = {
        **_audit(found, calls),
        **({CONSTRAINED_KEY: True} if constrained else {}),
        **({ADVISED_KEY: advised} if advised else {}),
    }
    updated = message.model_copy(
        update={
            "tool_calls": calls,
            "additional_kwargs": {**message.additional_kwargs, AUDIT_KEY: audit},
        }
    )
    return [updated, *errors]


def _audit(found: TextToolCalls, calls: list[ToolCall]) -> dict[str, Any]:
    return {
        "forms": found.formats,
        "calls": [c["id"] for c in calls],
        "refused": [c["id"] for c, t in zip(calls, found.calls, strict=True) if t.error],
        "left_as_text": found.ignored,
    }


EMPTY_ANSWER_NOTE = (
    "Your last answer was empty. Answer the request above in plain words, or call one of "
    "the tools to do it."
)
# Markup with nothing inside (`<tools></tools>`, `<tool_call>\n</tool_call>`): what a
# small model echoes of its prompt's tool section when it has nothing to call.
_EMPTY_MARKUP = re.compile(r"<(tools|tool_call|function_call)>\s*</\1>")


ECHO_NOTE = (
    "Your last answer repeated the context block sent with the request instead of doing "
    "what the request asks. Do it now: call the tools to read or change files (edit_file "
    "or write_file to change one), or answer in plain words."
)


def _ask_again(result: Sequence[BaseMessage]) -> tuple[AIMessage, str] | None:
    """The answer and the note to ask once more with, when the answer is no answer: no
    tool call, and no text but blanks or empty tool markup (Qwen2.5-Coder-1.5B answered
    `<tools></tools>` and the turn ended there, bench run 6), or text that opens with the
    request's own `<editor_context>` block (it echoed the named files back, the fix made
    inside the echo and never as an edit, bench runs 5-8 and 19)."""
    answers = [m for m in result if isinstance(m, AIMessage)]
    if len(answers) != 1:
        return None
    [answer] = answers
    if answer.tool_calls or answer.invalid_tool_calls:
        return None
    text = answer.text
    if not _EMPTY_MARKUP.sub("", text).strip():
        return answer, EMPTY_ANSWER_NOTE
    if text.lstrip().startswith(CONTEXT_OPEN_TAG):
        return answer, ECHO_NOTE
    return None


class TextToolCallMiddleware(AgentMiddleware):
    """Applies `with_text_tool_calls` to every model answer of the agent it is given to
    (listed last, so it wraps the model call innermost).

    `unknown_tool_note`: a hint added to the error of a call to a tool not offered, when
    it has one for that name (what a small model reaching for `write_memory` should do
    instead). `current_text`: how to read a file an answer shows changed, to tell a change
    from a quote; without it such answers are kept as they are."""

    def __init__(
        self,
        unknown_tool_note: UnknownToolNote | None = None,
        current_text: CurrentText | None = None,
    ) -> None:
        super().__init__()
        self.unknown_tool_note = unknown_tool_note
        self.current_text = current_text

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        request = request.override(messages=[as_shown_to_models(m) for m in request.messages])
        constrained = bool(request.tools) and needs_repair(request.messages, AUDIT_KEY)
        if constrained:
            response = await handler(_constrained(request, request.messages, REPAIR_NOTE))
        else:
            response = await handler(request)
            no_answer = _ask_again(response.result)
            unwritten = None if no_answer else await self._unwritten_change(request, response)
            if no_answer is not None:
                # Asked once more, with that answer and a fixed note; only the second
                # answer is kept (the note is not the user's words: it stays out of the
                # thread).
                answer, note = no_answer
                again = [*request.messages, answer, HumanMessage(note)]
                response = await handler(request.override(messages=again))
            elif unwritten is not None:
                answer, note, writers = unwritten
                asked = _constrained(request, [*request.messages, answer], note, writers)
                response = await handler(asked)
                constrained = True
        result = list(response.result)
        for index in range(len(result) - 1, -1, -1):
            message = result[index]
            if isinstance(message, AIMessage):
                result[index : index + 1] = with_text_tool_calls(
                    message, request.tools, self.unknown_tool_note, constrained=constrained
                )
                break
        return ModelResponse(result=result, structured_response=response.structured_response)

    async def _unwritten_change(
        self, request: ModelRequest, response: ModelResponse
    ) -> tuple[AIMessage, str, list[Any]] | None:
        """The answer, the note and the tools to offer, when the answer calls nothing and
        shows a project file changed in a fence (not a quote of it); else None."""
        answers = [m for m in response.result if isinstance(m, AIMessage)]
        writers = [t for t in request.tools if _tool_name(t) in WRITE_TOOLS]
        if self.current_text is None or len(answers) != 1 or not writers:
            return None
        [answer] = answers
        if answer.tool_calls or answer.invalid_tool_calls:
            return None
        if last_answer_constrained(request.messages, AUDIT_KEY):
            return None  # it just made a call so: what it says now is its own
        shown = shown_files(answer.text)
        if not shown or find_text_tool_calls(answer.text, OfferedTools(request.tools)).calls:
            return None
        changed: list[str] = []
        for item in shown:
            if item.path in changed:
                continue
            current = await asyncio.to_thread(self.current_text, item.path)
            if current is not None and not is_quote(item.body, current):
                changed.append(item.path)
        return (answer, unwritten_note(changed), writers) if changed else None


def _constrained(
    request: ModelRequest,
    messages: Sequence[Any],
    note: str,
    tools: Sequence[Any] | None = None,
) -> ModelRequest:
    """`request` asked with `note` after `messages`, no tool offered and the answer decoded
    under the schemas of `tools` (all those offered by default). The note, like every note
    here, is not the user's words: it stays out of the thread. The answer is read against
    the tools of the caller's own request."""
    chosen = request.tools if tools is None else tools
    settings = {**request.model_settings, "response_format": call_output(OfferedTools(chosen))}
    described = {name: _description(t) for t in chosen if (name := _tool_name(t))}
    return request.override(
        tools=[],
        model_settings=settings,
        messages=[*messages, HumanMessage(with_tool_list(note, described))],
    )


def _description(tool: Any) -> str:
    if isinstance(tool, dict):
        function = tool.get("function")
        text = (function if isinstance(function, dict) else tool).get("description")
    else:
        text = getattr(tool, "description", None)
    return text if isinstance(text, str) else ""
