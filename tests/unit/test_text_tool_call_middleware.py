"""The model's answer with its text-written calls made structured (the middleware's logic)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool

from invincat_server.runtime.agents.text_tool_call_middleware import (
    AUDIT_KEY,
    OfferedTools,
    with_text_tool_calls,
)
from invincat_server.runtime.memory_agent.runner import ProposalError, parse_proposal


@tool
def read_file(path: str, limit: int = 100) -> str:
    """Read a file."""
    return path


@tool
def approve_plan(todos: list[str], tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Ask for approval."""
    return tool_call_id


TOOLS = [read_file, approve_plan]


def hermes(name: str, **args: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': args})}</tool_call>"


def test_a_text_call_becomes_a_structured_call_and_the_text_is_kept() -> None:
    content = "Reading it.\n" + hermes("read_file", path="a.py")
    [message] = with_text_tool_calls(AIMessage(content, id="m1"), TOOLS)
    assert isinstance(message, AIMessage) and message.id == "m1"
    [call] = message.tool_calls
    assert (call["name"], call["args"]) == ("read_file", {"path": "a.py"})
    assert call["id"] and call["id"].startswith("call_")
    assert message.content == content
    audit = message.additional_kwargs[AUDIT_KEY]
    assert audit["forms"] == ["tool_call"] and audit["calls"] == [call["id"]]


def test_each_call_gets_a_fresh_id() -> None:
    content = hermes("read_file", path="a") + hermes("read_file", path="b")
    [first] = with_text_tool_calls(AIMessage(content), TOOLS)
    [again] = with_text_tool_calls(AIMessage(content), TOOLS)
    assert isinstance(first, AIMessage) and isinstance(again, AIMessage)
    ids = [c["id"] for c in first.tool_calls] + [c["id"] for c in again.tool_calls]
    assert len(set(ids)) == 4


def test_an_unusable_call_is_answered_with_an_error_at_once() -> None:
    content = hermes("read_file", path=7) + hermes("rm", path="/") + hermes("read_file", path="ok")
    message, *errors = with_text_tool_calls(AIMessage(content), TOOLS)
    assert isinstance(message, AIMessage) and len(message.tool_calls) == 3
    assert all(isinstance(e, ToolMessage) and e.status == "error" for e in errors)
    answered = {e.tool_call_id for e in errors if isinstance(e, ToolMessage)}
    pending = [c for c in message.tool_calls if c["id"] not in answered]
    assert [(c["name"], c["args"]) for c in pending] == [("read_file", {"path": "ok"})]
    assert set(message.additional_kwargs[AUDIT_KEY]["refused"]) == answered


def test_injected_arguments_are_not_required_of_the_model() -> None:
    [message] = with_text_tool_calls(AIMessage(hermes("approve_plan", todos=["a"])), TOOLS)
    assert isinstance(message, AIMessage)
    [call] = message.tool_calls
    assert call["args"] == {"todos": ["a"]}


def test_structured_or_malformed_answers_are_left_alone() -> None:
    structured = AIMessage(
        hermes("read_file", path="x"),
        tool_calls=[{"name": "read_file", "args": {"path": "y"}, "id": "c1", "type": "tool_call"}],
    )
    assert with_text_tool_calls(structured, TOOLS) == [structured]
    malformed = AIMessage(
        hermes("read_file", path="x"),
        invalid_tool_calls=[{"name": "read_file", "args": "{", "id": "c2", "error": "bad"}],
    )
    assert with_text_tool_calls(malformed, TOOLS) == [malformed]
    prose = AIMessage("All done.")
    assert with_text_tool_calls(prose, TOOLS) == [prose]


def test_content_blocks_are_searched_as_their_text() -> None:
    blocks: list[Any] = [{"type": "text", "text": hermes("read_file", path="a.py")}]
    [message] = with_text_tool_calls(AIMessage(blocks), TOOLS)
    assert isinstance(message, AIMessage) and len(message.tool_calls) == 1


def test_offered_tools_include_dict_tools_and_describe_only_on_demand() -> None:
    dict_tool = {"type": "function", "function": {"name": "lookup", "parameters": {}}}
    offered = OfferedTools([read_file, dict_tool, object()])
    assert sorted(offered) == ["lookup", "read_file"] and len(offered) == 2
    schema = offered["read_file"]
    assert schema is not None and schema["required"] == ["path"]


def _reply(content: str) -> AIMessage:
    return AIMessage(content)


OPERATION = {"op": "noop", "reason": "nothing durable"}


def test_the_memory_agents_submit_written_as_text_is_used() -> None:
    text = (
        "```json\n"
        + json.dumps({"name": "submit_memory_operations", "arguments": {"operations": [OPERATION]}})
        + "\n```"
    )
    assert parse_proposal(_reply(text)) == [OPERATION]
    with pytest.raises(ProposalError, match="answered with text"):
        parse_proposal(_reply(text), text_tool_calls=False)


def test_a_text_submit_with_bad_arguments_is_a_proposal_error() -> None:
    bad = hermes("submit_memory_operations", operations="all of it")
    with pytest.raises(ProposalError, match=r"as text.*operations"):
        parse_proposal(_reply(bad))


def test_the_bare_operations_object_still_works() -> None:
    assert parse_proposal(_reply(json.dumps({"operations": [OPERATION]}))) == [OPERATION]
