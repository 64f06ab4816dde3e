"""A server that refuses an optional parameter by name (HTTP 400) gets the request again
without it, and never again from that model; one that refuses the tools is a clear error.
Real ChatOpenAI (StrictChatOpenAI) against the fake server; the turn-level view (stderr,
error event) is in tests/terminal/test_server_refusals.py."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import openai
import pytest

from invincat_server.runtime.config import Settings
from invincat_server.runtime.errors import ToolCallingUnsupportedError
from invincat_server.runtime.models import build_chat_model
from invincat_server.runtime.request_params import refused_param, refuses_tools
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE

TOOL = {
    "type": "function",
    "function": {"name": "lookup", "description": "x", "parameters": {"type": "object"}},
}


def model_for(server: FakeOpenAIServer, tmp_path: Path, **binding: Any) -> Any:
    return base_model(server, tmp_path).bind_tools([TOOL], **binding)


def base_model(server: FakeOpenAIServer, tmp_path: Path, **settings: Any) -> Any:
    return build_chat_model(
        Settings(
            home=tmp_path,
            model="fake-model",
            base_url=server.base_url,
            api_key="test",
            request_timeout=60,
            max_retries=0,
            **settings,
        )
    )


async def test_a_refused_tool_choice_is_dropped_once_and_for_the_session(
    fake_openai: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    refusal = "tool_choice is not supported by this server"
    fake_openai.add_steps([{"fault": "http_400", "message": refusal}, {"content": "one"}])
    fake_openai.add_steps([{"content": "two"}])
    model = model_for(fake_openai, tmp_path, tool_choice="lookup")
    with caplog.at_level(logging.WARNING, logger="invincat.models"):
        assert (await model.ainvoke("first")).content == "one"
        assert (await model.ainvoke("second")).content == "two"
    sent = fake_openai.chat_requests()
    assert ["tool_choice" in body for body in sent] == [True, False, False]
    assert all(body["tools"] for body in sent)
    [said] = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert "refused `tool_choice`" in said and "no longer sends it" in said


async def test_a_400_is_judged_by_its_own_request_while_another_is_sent_meanwhile(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    """One model instance serves every session of a language server or ACP process: the
    memory agent's forced tool_choice refused while another session's request (without
    it) goes out still drops tool_choice and retries, instead of failing the turn because
    the other request's parameters were taken for its own."""
    refusal = "tool_choice is not supported by this server"
    forced_turn = {"match": {"last_user_contains": "forced"}}
    fake_openai.add_steps(
        [
            # Held back so that the other request is built and sent meanwhile.
            {**forced_turn, "fault": "http_400", "message": refusal, "delay": 4},
            {"match": {"last_user_contains": "other"}, "content": "other answer"},
            {**forced_turn, "content": "forced answer"},
        ]
    )
    model = base_model(fake_openai, tmp_path)
    forced = model.bind_tools([TOOL], tool_choice="lookup")

    first = asyncio.create_task(forced.ainvoke("forced"))
    await asyncio.to_thread(fake_openai.wait_for_requests, 1, DEADLINE)
    assert (await model.bind_tools([TOOL]).ainvoke("other")).content == "other answer"
    assert not first.done()  # the other request was sent while the 400 was on its way

    assert (await first).content == "forced answer"
    sent = fake_openai.chat_requests()
    assert ["tool_choice" in body for body in sent] == [True, False, False]


async def test_parallel_tool_calls_named_in_the_param_field_is_dropped(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.add_steps(
        [
            {"fault": "http_400", "param": "parallel_tool_calls", "message": "Extra inputs "},
            {"content": "ok"},
        ]
    )
    model = model_for(fake_openai, tmp_path, parallel_tool_calls=False)
    assert (await model.ainvoke("hi")).content == "ok"
    first, second = fake_openai.chat_requests()
    assert first["parallel_tool_calls"] is False and "parallel_tool_calls" not in second


async def test_a_refused_cap_name_is_retried_under_the_other_name(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_says = (
        "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead."
    )
    fake_openai.add_steps([{"fault": "http_400", "message": openai_says}, {"content": "ok"}])
    assert (await model_for(fake_openai, tmp_path).ainvoke("hi")).content == "ok"
    first, second = fake_openai.chat_requests()
    assert first["max_tokens"] == 4096 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 4096 and "max_tokens" not in second


@pytest.mark.parametrize(
    "message",
    [
        "max_tokens is too large: 4096. This model supports at most 2048 tokens.",
        "messages: field required",
        "",
        "tool_choice\x00" + "x" * 100_000,
    ],
)
async def test_a_400_that_refuses_nothing_droppable_is_not_retried(
    fake_openai: FakeOpenAIServer, tmp_path: Path, message: str
) -> None:
    fake_openai.add_steps([{"fault": "http_400", "message": message}, {"content": "unused"}])
    with pytest.raises(openai.BadRequestError):
        await model_for(fake_openai, tmp_path).ainvoke("hi")
    assert len(fake_openai.chat_requests()) == 1


@pytest.mark.parametrize(
    ("message", "advice"),
    [
        ("registry.ollama.ai/library/gemma:2b does not support tools", "tagged 'tools'"),
        ("tools param requires --jinja flag", "start llama-server with --jinja"),
    ],
)
async def test_a_server_that_refuses_the_tools_is_named_with_what_to_do(
    fake_openai: FakeOpenAIServer, tmp_path: Path, message: str, advice: str
) -> None:
    fake_openai.add_steps([{"fault": "http_400", "message": message}])
    with pytest.raises(ToolCallingUnsupportedError) as caught:
        await model_for(fake_openai, tmp_path).ainvoke("hi")
    said = str(caught.value)
    assert "The model `fake-model` at http://127.0.0.1:" in said
    assert "cannot call tools" in said and advice in said and message in said


def test_refusal_words_are_needed_and_only_parameters_that_were_sent_count() -> None:
    sent = {"tool_choice", "parallel_tool_calls", "max_tokens", "tools"}
    assert refused_param("Unknown field tool_choice", None, sent) == "tool_choice"
    assert refused_param('"auto" tool choice requires --enable-auto-tool-choice', None, sent)
    assert refused_param("tool_choice is not supported", None, {"tools"}) is None
    assert refused_param("tool_choice must be 'auto'", "tool_choice", sent) is None
    assert refused_param("unsupported value", "max_tokens", sent) == "max_tokens"
    assert refused_param("unsupported value", ["max_tokens"], sent) is None  # type: ignore[arg-type]
    assert refuses_tools("registry.ollama.ai/library/x does not support tools")
    assert not refuses_tools("tool_choice is not supported")
    assert not refuses_tools("the tools list is too long for this model's context: 9000 > 8192")


@pytest.mark.parametrize(
    ("message", "refused"),
    [
        # Real servers' words, the refusal next to the name.
        ("Unsupported parameter: 'max_tokens' is not supported with this model.", "max_tokens"),
        ("Unknown field tool_choice", "tool_choice"),
        ('"auto" tool choice requires --enable-auto-tool-choice', "tool_choice"),
        ("`parallel_tool_calls` is not supported", "parallel_tool_calls"),
        (
            "1 validation error for ChatCompletionRequest\nparallel_tool_calls\n"
            "  Extra inputs are not permitted [type=extra_forbidden]",
            "parallel_tool_calls",
        ),
        ("Unrecognized request argument supplied: max_tokens", "max_tokens"),
        # A refusal word elsewhere in a message that names the parameter: kept.
        ("Unknown model 'gpt-x'; max_tokens must be at most 4096", None),
        ("Invalid value for 'tool_choice': unknown tool 'lookup2'", None),
        ("tool_choice names a tool that is not in tools; messages[2] is unexpected", None),
        ("max_tokens " + " " * 100_000 + "x", None),  # no backtracking over the spaces
    ],
)
def test_a_parameter_is_refused_only_by_words_next_to_its_name(
    message: str, refused: str | None
) -> None:
    sent = {"tools", "tool_choice", "parallel_tool_calls", "max_tokens"}
    assert refused_param(message, None, sent) == refused


@pytest.mark.parametrize(
    ("message", "refuses"),
    [
        ("registry.ollama.ai/library/gemma:2b does not support tools", True),
        ("tools param requires --jinja flag", True),
        ('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser', True),
        ("Tools are not supported for this model", True),
        ("tool calling is not supported with this model", True),
        ("This model doesn't support function calling", True),
        ("Unsupported parameter: 'tools'", True),
        # Messages that mention tools and a refusal word, and refuse something else.
        ("Unknown parameter 'foo' (this server supports tools)", False),
        ("messages[3]: tool call id call_1 not found; unexpected role 'tool'", False),
        ("Invalid 'tools[0].function.name': string does not match pattern", False),
        ("the tools list is too long for this model's context: 9000 > 8192", False),
        ("max_tokens is not supported; tools are fine", False),
    ],
)
def test_tools_are_refused_only_in_a_real_servers_words(message: str, refuses: bool) -> None:
    assert refuses_tools(message) is refuses


async def test_a_400_that_only_mentions_tools_does_not_end_tool_calling(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    message = "messages[3]: tool call id call_1 not found; unexpected role 'tool'"
    fake_openai.add_steps([{"fault": "http_400", "message": message}])
    with pytest.raises(openai.BadRequestError):  # the server's own error, not ours
        await model_for(fake_openai, tmp_path).ainvoke("hi")
    assert len(fake_openai.chat_requests()) == 1


async def test_a_refused_temperature_is_dropped(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    # OpenAI's reasoning models: "Unsupported value: 'temperature' does not support 0.2 with
    # this model. Only the default (1) value is supported."
    refusal = "Unsupported value: 'temperature' does not support 0.2 with this model."
    fake_openai.add_steps(
        [{"fault": "http_400", "param": "temperature", "message": refusal}, {"content": "ok"}]
    )
    model = base_model(fake_openai, tmp_path, temperature=0.2)
    assert (await model.ainvoke("hi")).content == "ok"
    first, second = fake_openai.chat_requests()
    assert first["temperature"] == 0.2 and "temperature" not in second
