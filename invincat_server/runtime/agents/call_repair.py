"""After an answer whose every tool call was refused for its form, one answer decoded
under the offered tools' schemas.

A small model that means to act often cannot write the call: Qwen2.5-Coder-1.5B sent
`write_file {}`, an `edit_file` without `old_string` and Python's triple quotes in JSON,
was told each time what was wrong, and wrote the same broken call again until the
repeated-call guard ended the turn (bench runs 23-24). Told once more is not enough; what
works for the planner and the memory model (bench run 17, memory_agent/prompt.py) is to
ask with no tool offered and the answer constrained, by `response_format`, to JSON that
fits: llama.cpp, Ollama and vLLM then decode only a call to an offered tool with the
arguments its schema requires. The answer is read as a call written as text, by the same
parser and validation, and goes through the same approvals as any other call.

The same is asked, offering only the tools that write, of an answer that shows a file
changed in a code fence and calls no tool (runtime/shown_files.py): Qwen2.5-Coder-1.5B
answered "Here's the corrected `calc.py`:" and the fixed file, and nothing was written,
three times of three (bench run 25).

Asked so only right after such an answer, and never twice in a row: an answer decoded so
is marked (`CONSTRAINED_KEY` in its audit), and one refused again is fed back as ever.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from invincat_server.runtime.tool_traits import WRITES_FILES

CONSTRAINED_KEY = "constrained"
"""In a text-call audit (text_tool_call_middleware.AUDIT_KEY): the answer was decoded
under `call_output`."""

ADVISED_KEY = "advised"
"""In a text-call audit: the calls whose error added the unknown-tool note (a memory tool
not offered: "reply to the user in one plain sentence"). An answer with one is not asked
for again under the schemas: that would force the call the note says is not needed
(Qwen2.5-Coder-1.5B, so forced after `write_memory`, read a Makefile that does not exist
and apologised, and nothing was remembered, bench run 27)."""

REPAIR_NOTE = (
    "Your last tool call could not be used: the error above says why. No tool is offered "
    'this time: answer with only the JSON object {"name": "<tool>", "arguments": {...}} of '
    "the one call to make now, every required argument given, and nothing else."
)


WRITE_TOOLS = WRITES_FILES
"""What an answer that shows a changed file is offered (`unwritten_note`)."""


def unwritten_note(paths: Sequence[str]) -> str:
    """The note asking for the call that makes the change an answer only showed."""
    return (
        f"Your answer shows {', '.join(paths)} changed, but nothing was written: a file "
        "changes only through a tool call. No tool is offered this time: answer with only "
        'the JSON object {"name": "edit_file" or "write_file", "arguments": {...}} of the '
        "call that makes that change, and nothing else."
    )


def last_answer_constrained(messages: Sequence[BaseMessage], audit_key: str) -> bool:
    """Whether the last answer in `messages` was itself decoded under `call_output`."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            audit = message.additional_kwargs.get(audit_key)
            return isinstance(audit, dict) and bool(audit.get(CONSTRAINED_KEY))
    return False


def needs_repair(messages: Sequence[BaseMessage], audit_key: str) -> bool:
    """Whether the last answer in `messages` is an unconstrained one whose calls, read from
    its text, were all refused, with nothing after it but their results."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ToolMessage):
            continue
        if not isinstance(message, AIMessage) or index == len(messages) - 1:
            return False
        audit = message.additional_kwargs.get(audit_key)
        if not isinstance(audit, dict) or audit.get(CONSTRAINED_KEY) or audit.get(ADVISED_KEY):
            return False
        calls, refused = audit.get("calls"), audit.get("refused")
        if not (isinstance(calls, list) and calls and isinstance(refused, list)):
            return False
        return set(calls) <= set(refused)
    return False


def with_tool_list(note: str, descriptions: Mapping[str, str]) -> str:
    """`note` followed by each tool's name and the first sentence of its description: no
    tool is offered with the answer, so the model's prompt no longer says what each does
    (Qwen2.5-Coder-1.5B, asked so, replaced a whole cli.py with the one line it meant to
    add, bench run 26)."""
    lines = [f"- {name}: {_first_sentence(text)}" for name, text in descriptions.items()]
    return "\n".join([note, "The tools:", *lines]) if lines else note


def _first_sentence(text: str, limit: int = 200) -> str:
    first = text.strip().split("\n", 1)[0]
    end = first.find(". ")
    first = first[: end + 1] if end >= 0 else first
    return first if len(first) <= limit else first[: limit - 1] + "…"


def call_output(schemas: Mapping[str, Mapping[str, Any] | None]) -> dict[str, Any]:
    """`response_format` admitting one call of an offered tool, `{"name", "arguments"}`,
    its arguments as that tool's schema asks (any object where a tool has none)."""
    choices = [
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": [name]},
                "arguments": dict(schema) if schema else {"type": "object"},
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for name, schema in schemas.items()
    ]
    return {
        "type": "json_schema",
        "json_schema": {"name": "tool_call", "schema": {"anyOf": choices}},
    }
