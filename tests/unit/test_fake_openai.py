"""The fake OpenAI server, exercised through the real langchain-openai / openai clients."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI

from invincat_server.testing.fake_openai import (
    EXHAUSTED_CONTENT,
    FakeOpenAIServer,
    ScenarioError,
    load_script,
)
from tests.deadlines import DEADLINE


def chat(server: FakeOpenAIServer, **kwargs: Any) -> ChatOpenAI:
    options: dict[str, Any] = {
        "model": "fake-model",
        "base_url": server.base_url,
        "api_key": "test",
        "streaming": True,
        "stream_usage": True,
        "max_retries": 0,
        "timeout": 5,
    }
    options.update(kwargs)
    return ChatOpenAI(**options)


def cause_chain(exc: BaseException | None) -> list[str]:
    """reprs of an exception and everything it was raised from (SDKs wrap several times)."""
    found: list[str] = []
    while exc is not None and len(found) < 20:
        found.append(repr(exc))
        exc = exc.__cause__ or exc.__context__
    return found


async def test_streamed_content_arrives_in_chunks(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps([{"content": "Hello, streaming world!", "chunk_size": 5}])
    chunks = [c async for c in chat(fake_openai).astream("hi")]
    texts = [c.content for c in chunks if c.content]
    assert texts == ["Hello", ", str", "eamin", "g wor", "ld!"]
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk
    assert isinstance(merged, AIMessageChunk)
    assert merged.content == "Hello, streaming world!"
    assert merged.usage_metadata is not None
    assert merged.usage_metadata["output_tokens"] == 6  # 23 chars / 4, rounded up
    assert merged.usage_metadata["total_tokens"] == merged.usage_metadata["input_tokens"] + 6
    assert merged.response_metadata["finish_reason"] == "stop"


async def test_tool_call_is_parsed_with_exact_args(fake_openai: FakeOpenAIServer) -> None:
    args = {"path": "a.txt", "content": "x" * 40}
    fake_openai.add_steps(
        [
            {"content": "Writing.", "tool_calls": [{"name": "write_file", "arguments": args}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "b"}, "id": "mine"}]},
        ]
    )
    model = chat(fake_openai)
    first = await model.ainvoke("write it")
    assert first.content == "Writing."
    assert first.tool_calls == [
        {"name": "write_file", "args": args, "id": "call_1", "type": "tool_call"}
    ]
    assert first.usage_metadata is not None
    assert first.response_metadata["finish_reason"] == "tool_calls"
    second = await model.ainvoke("read it")
    assert [(c["name"], c["id"]) for c in second.tool_calls] == [("read_file", "mine")]


async def test_tool_call_chunks_look_like_the_real_api(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps([{"tool_calls": [{"name": "ls", "arguments": {"path": "src/pkg"}}]}])
    async with httpx.AsyncClient() as client:
        body = {"model": "m", "messages": [], "stream": True}
        response = await client.post(f"{fake_openai.base_url}/chat/completions", json=body)
    events = [line[6:] for line in response.text.split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[0] == {"role": "assistant", "content": ""}
    assert deltas[1]["tool_calls"] == [
        {
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": {"name": "ls", "arguments": ""},
        }
    ]
    fragments = [d["tool_calls"][0]["function"]["arguments"] for d in deltas[2:-1]]
    assert len(fragments) > 1 and "".join(fragments) == '{"path":"src/pkg"}'
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert "usage" not in chunks[-1]  # no stream_options.include_usage in this request


async def test_malformed_arguments_become_invalid_tool_calls(
    fake_openai: FakeOpenAIServer,
) -> None:
    # Streaming LangChain parses arguments leniently ("{not json" would become {}), so the
    # streamed case uses something no partial-JSON parser accepts.
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "edit", "arguments_raw": "{'path': 'a.txt'}"}]},
            {"tool_calls": [{"name": "edit", "arguments_raw": "{not json"}]},
        ]
    )
    streamed = await chat(fake_openai).ainvoke("go")
    assert streamed.tool_calls == []
    assert [(c["name"], c["args"]) for c in streamed.invalid_tool_calls] == [
        ("edit", "{'path': 'a.txt'}")
    ]
    plain = await chat(fake_openai, streaming=False).ainvoke("go")
    assert plain.tool_calls == []
    assert [(c["name"], c["args"]) for c in plain.invalid_tool_calls] == [("edit", "{not json")]


async def test_non_streaming_completion(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps([{"content": "plain answer", "usage": {"prompt_tokens": 11}}])
    result = await chat(fake_openai, streaming=False).ainvoke("hi")
    assert result.content == "plain answer"
    assert result.usage_metadata is not None
    assert result.usage_metadata["input_tokens"] == 11
    assert result.usage_metadata["output_tokens"] == 3
    assert fake_openai.chat_requests()[0].get("stream") in (None, False)


async def test_http_500_raises_without_retries(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps([{"fault": "http_500", "times": 3}])
    with pytest.raises(openai.InternalServerError):
        await chat(fake_openai).ainvoke("hi")
    assert [r.outcome for r in fake_openai.requests] == ["fault:http_500"]
    assert len(fake_openai.pending_steps()) == 2  # `times` counts down per request


async def test_http_429_is_retried_then_succeeds(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps(
        [{"fault": "http_429", "retry_after": 0, "times": 1}, {"content": "after the wait"}]
    )
    result = await chat(fake_openai, max_retries=1).ainvoke("hi")
    assert result.content == "after the wait"
    assert [r.outcome for r in fake_openai.requests] == ["fault:http_429", "ok"]
    assert len(fake_openai.chat_requests()) == 2


async def test_cut_stream_raises_instead_of_a_partial_answer(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.add_steps([{"fault": "cut", "content": "partial answer that will be cut"}])
    received: list[str] = []
    with pytest.raises(openai.APIConnectionError) as caught:
        async for chunk in chat(fake_openai, max_retries=2).astream("hi"):
            received.append(str(chunk.content))
    # The chunked body was left unterminated, so httpx reports a protocol error.
    assert "incomplete chunked read" in " ".join(cause_chain(caught.value))
    assert "".join(received) and "".join(received) != "partial answer that will be cut"
    assert len(fake_openai.requests) == 1  # a stream that already started is not retried


def test_cut_is_a_protocol_error_for_plain_httpx(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps([{"fault": "cut", "content": "x" * 64, "cut_after_chunks": 2}])
    lines: list[str] = []
    body = {"model": "m", "messages": [], "stream": True}
    with (
        pytest.raises(httpx.RemoteProtocolError),
        httpx.stream("POST", f"{fake_openai.base_url}/chat/completions", json=body) as response,
    ):
        lines.extend(line for line in response.iter_lines() if line)
    assert len(lines) == 3  # role chunk + 2 content chunks, then the cut


async def test_truncate_ends_the_stream_cleanly_without_finish_reason_or_done(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.add_steps([{"fault": "truncate", "content": "x" * 64, "cut_after_chunks": 2}])
    body = {"model": "m", "messages": [], "stream": True}
    with httpx.stream("POST", f"{fake_openai.base_url}/chat/completions", json=body) as response:
        lines = [line for line in response.iter_lines() if line]  # no protocol error
    assert len(lines) == 3  # role chunk + 2 content chunks, then a clean end
    assert "[DONE]" not in " ".join(lines)
    assert all(json.loads(line[6:])["choices"][0]["finish_reason"] is None for line in lines)
    # The SDK and LangChain see a normal end of stream: only a finish_reason check notices.
    fake_openai.add_steps([{"fault": "truncate", "content": "y" * 64, "cut_after_chunks": 2}])
    chunks = [chunk async for chunk in chat(fake_openai).astream("hi")]
    assert "".join(str(c.content) for c in chunks) == "y" * 16
    assert all(not c.response_metadata.get("finish_reason") for c in chunks)


def test_truncate_non_streaming_is_a_well_formed_half_answer(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.add_steps([{"fault": "truncate", "content": "abcdefgh"}])
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    answer = httpx.post(f"{fake_openai.base_url}/chat/completions", json=body).json()
    assert answer["choices"][0]["message"]["content"] == "abcd"
    assert answer["choices"][0]["finish_reason"] is None


async def test_hang_times_out(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps([{"fault": "hang"}])
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        await chat(fake_openai, timeout=1, max_retries=0).ainvoke("hi")
    assert time.monotonic() - started < 4


def test_stop_drops_a_hanging_request_promptly() -> None:
    server = FakeOpenAIServer([{"fault": "hang"}]).start_in_thread()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            httpx.post(f"{server.base_url}/chat/completions", json={"messages": []}, timeout=10)
        except httpx.HTTPError as exc:
            errors.append(exc)

    client = threading.Thread(target=call)
    client.start()
    server.wait_for_requests(1, timeout=DEADLINE)
    started = time.monotonic()
    server.stop_thread()
    client.join(5)
    assert time.monotonic() - started < 2
    assert [type(e) for e in errors] == [httpx.RemoteProtocolError]


async def test_match_routes_by_model_and_message(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps(
        [
            {"match": {"model": "memory-model"}, "content": "memory answer"},
            {"match": {"has_tool_result": True}, "content": "saw the tool result"},
            {"match": {"last_user_contains": "second"}, "content": "second answer"},
            {"content": "main answer"},
        ]
    )
    main = chat(fake_openai)
    assert (await main.ainvoke("first question")).content == "main answer"
    assert (await main.ainvoke("the second one")).content == "second answer"
    memory = chat(fake_openai, model="memory-model")
    assert (await memory.ainvoke("anything")).content == "memory answer"
    history = [
        HumanMessage("run ls"),
        AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": "call_9"}]),
        ToolMessage("a.txt", tool_call_id="call_9"),
    ]
    assert (await main.ainvoke(history)).content == "saw the tool result"
    assert fake_openai.pending_steps() == []


async def test_exhausted_script_answers_and_warns(
    fake_openai: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    fake_openai.add_steps([{"content": "only one"}])
    model = chat(fake_openai)
    assert (await model.ainvoke("one")).content == "only one"
    assert (await model.ainvoke("two")).content == EXHAUSTED_CONTENT
    assert fake_openai.requests[-1].outcome == "exhausted"
    assert fake_openai.requests[-1].step is None
    assert any("script exhausted" in r.getMessage() for r in caplog.records)


async def test_request_log_records_messages(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps([{"content": "ok", "delay": 0.05, "chunk_delay": 0.01}])
    await chat(fake_openai).ainvoke([HumanMessage("remember this text")])
    (recorded,) = fake_openai.requests
    assert recorded.method == "POST"
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == "Bearer test"
    assert recorded.body["messages"] == [{"role": "user", "content": "remember this text"}]
    assert recorded.body["stream_options"] == {"include_usage": True}
    assert recorded.step is not None and recorded.step["content"] == "ok"
    assert fake_openai.chat_requests() == [recorded.body]


def test_first_chunk_delay_sends_the_head_at_once_and_the_chunks_later(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.add_steps([{"content": "late", "first_chunk_delay": 0.5}])
    body = {"model": "m", "messages": [], "stream": True}
    with httpx.Client(base_url=fake_openai.base_url, timeout=60) as client:
        with client.stream("POST", "/chat/completions", json=body) as response:
            # The head arrived before any chunk: a local server reading a long prompt.
            assert response.status_code == 200
            text = "".join(response.iter_text())
    assert '"content":"late"' in text.replace(" ", "") and "[DONE]" in text


def test_control_endpoints(fake_openai: FakeOpenAIServer) -> None:
    root = fake_openai.base_url.removesuffix("/v1")
    with httpx.Client(base_url=root) as client:
        added = client.post("/_fake/steps", json={"steps": [{"content": "via http"}]})
        assert added.json() == {"added": 1, "pending": 1}
        bad = client.post("/_fake/steps", json={"steps": [{"contnet": "typo"}]})
        assert bad.status_code == 400 and "contnet" in bad.json()["error"]["message"]
        answer = client.post("/v1/chat/completions", json={"model": "m", "messages": []})
        assert answer.json()["choices"][0]["message"]["content"] == "via http"
        models = client.get("/v1/models").json()
        assert "fake-model" in [m["id"] for m in models["data"]]
        log = client.get("/_fake/requests").json()
        assert [(r["path"], r["outcome"]) for r in log] == [
            ("/v1/chat/completions", "ok"),
            ("/v1/models", "models"),
        ]
        assert client.post("/_fake/reset").json() == {"ok": True}
        assert client.get("/_fake/requests").json() == []
        assert client.get("/nope").status_code == 404


def test_invalid_steps_are_rejected_up_front() -> None:
    server = FakeOpenAIServer()
    for bad in (
        {"fault": "explode"},
        {"delay": 1},
        {"content": "x", "match": {"modle": "m"}},
        {"tool_calls": [{"arguments": {}}]},
        {"content": "x", "times": 0},
        {"content": "x", "first_chunk_delay": -1},
        {"content": "x", "first_chunk_delay": "2"},
    ):
        with pytest.raises(ScenarioError):
            server.add_steps([bad])
    assert server.pending_steps() == []


async def test_in_loop_start_stop_and_yaml_script(tmp_path: Path) -> None:
    script = tmp_path / "scenario.yaml"
    script.write_text("steps:\n  - content: from yaml\n    chunk_size: 3\n", encoding="utf-8")
    async with FakeOpenAIServer(load_script(script)) as server:
        assert (await chat(server).ainvoke("hi")).content == "from yaml"


def test_cli_serves_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "scenario.json"
    script.write_text(json.dumps({"steps": [{"content": "from the cli"}]}), encoding="utf-8")
    command = [sys.executable, "-m", "invincat_server.testing.fake_openai"]
    proc = subprocess.Popen(
        [*command, "--script", str(script), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline().strip()
        assert ready.startswith("READY http://127.0.0.1:") and ready.endswith("/v1"), ready
        base_url = ready.split(" ", 1)[1]
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        response = httpx.post(f"{base_url}/chat/completions", json=body, timeout=DEADLINE)
        assert response.json()["choices"][0]["message"]["content"] == "from the cli"
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, stderr
    assert "/v1/chat/completions" in stderr


def test_invincat_env_points_at_the_fake(
    invincat_env: dict[str, str], fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    assert invincat_env["OPENAI_BASE_URL"] == fake_openai.base_url
    assert invincat_env["OPENAI_API_KEY"] == "test-key"
    assert invincat_env["INVINCAT_MODEL"] == "fake-model"
    assert Path(invincat_env["INVINCAT_HOME"]).is_dir()
    assert Path(invincat_env["HOME"]).is_dir()
    assert invincat_env["HOME"] != invincat_env["INVINCAT_HOME"]
    assert (workspace / ".git").is_dir()


def test_invincat_monkeyenv_applies_to_this_process(
    invincat_monkeyenv: dict[str, str], fake_openai: FakeOpenAIServer
) -> None:
    assert os.environ["OPENAI_BASE_URL"] == fake_openai.base_url
    assert os.environ["INVINCAT_HOME"] == invincat_monkeyenv["INVINCAT_HOME"]


def test_responses_api_streams_the_scripted_steps(fake_openai: FakeOpenAIServer) -> None:
    """`/v1/responses` (what OpenAI's Codex CLI speaks) answers from the same script:
    text as a message item, tool calls as function_call items, usage at the end; `match`
    sees the request through its chat-shaped view (here: the tool result)."""
    fake_openai.add_steps(
        [
            {
                "content": "Running it.",
                "tool_calls": [{"name": "exec_command", "arguments": {"cmd": "ls"}}],
            },
            {"match": {"has_tool_result": True}, "content": "Listed."},
        ]
    )
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="test", max_retries=0)
    events = list(client.responses.create(model="fake-model", input="list files", stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "Running it."
    final = events[-1].response
    call = final.output[1]
    assert (call.type, call.name, json.loads(call.arguments)) == (
        "function_call",
        "exec_command",
        {"cmd": "ls"},
    )
    assert final.usage is not None and final.usage.total_tokens > 0

    answer = client.responses.create(
        model="fake-model",
        input=[
            {"role": "user", "content": "list files"},
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
            {"type": "function_call_output", "call_id": call.call_id, "output": "a.txt"},
        ],
    )
    assert answer.output_text == "Listed."
    assert [r["input"][-1]["type"] for r in fake_openai.responses_requests()[1:]] == [
        "function_call_output"
    ]
    assert fake_openai.chat_requests() == []


def test_a_raw_step_sends_its_body_as_it_is(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.add_steps(
        [{"fault": "raw", "status": 502, "content_type": "text/html", "body": "<h1>bad</h1>"}]
    )
    with httpx.Client() as client:
        answer = client.post(f"{fake_openai.base_url}/chat/completions", json={"model": "m"})
    assert answer.status_code == 502
    assert answer.headers["content-type"] == "text/html"
    assert answer.text == "<h1>bad</h1>"
    assert fake_openai.requests[-1].outcome == "fault:raw"


def test_raw_steps_are_validated() -> None:
    server = FakeOpenAIServer()
    for bad in (
        {"fault": "raw"},  # no body
        {"fault": "raw", "body": 3},
        {"fault": "raw", "body": "", "status": 42},
        {"fault": "raw", "body": "", "content": "x"},
        {"content": "x", "body": "y"},  # body only with fault: raw
    ):
        with pytest.raises(ScenarioError):
            server.add_steps([bad])
    assert server.pending_steps() == []
