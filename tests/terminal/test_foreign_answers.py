"""A model server that does not speak OpenAI's API (a login page, a proxy's error page,
other JSON, a broken stream, nothing) is named as such: what came back (status, content
type, the body's start, redacted and with control characters escaped), the server's URL,
never the API key; the turn fails like any model error (error event, exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

HTML = "<!DOCTYPE html><html><head><title>Sign in</title></head><body>Log in</body></html>"
CASES = {
    "html_200": (
        {"fault": "raw", "content_type": "text/html; charset=utf-8", "body": HTML},
        "HTTP 200, content type text/html; charset=utf-8, body starts '<!DOCTYPE html>",
    ),
    "html_502": (
        # 5xx is retried (max_retries 2): each attempt gets the same page.
        {
            "fault": "raw",
            "status": 502,
            "content_type": "text/html",
            "body": "<html><body><h1>502 Bad Gateway</h1></body></html>",
            "times": 3,
        },
        "HTTP 502, content type text/html, body starts '<html><body><h1>502 Bad Gateway",
    ),
    "json_without_choices": (
        {"fault": "raw", "content_type": "application/json", "body": '{"foo":"bar"}'},
        'HTTP 200, content type application/json, body starts \'{"foo":"bar"}\'',
    ),
    "sse_event_without_choices": (
        {"fault": "raw", "content_type": "text/event-stream", "body": 'data: {"foo":"bar"}\n\n'},
        'HTTP 200, content type text/event-stream, body starts \'data: {"foo"',
    ),
    "sse_invalid_json": (
        {
            "fault": "raw",
            "content_type": "text/event-stream",
            "body": 'data: {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}\n\n'
            "data: {not json\n\n",
        },
        "a stream event is not JSON",
    ),
    # JSON of the wrong shape: each fails in the SDK's or LangChain's chunk parsing.
    **{
        f"sse_{name}": (
            {"fault": "raw", "content_type": "text/event-stream", "body": f"data: {event}\n\n"},
            "a stream event has the wrong shape",
        )
        for name, event in {
            "null": "null",
            "array": "[]",
            "string": '"text"',
            "null_choice": '{"choices": [null]}',
            "number_delta": '{"choices": [{"index": 0, "delta": 5}]}',
            "number_content": '{"choices": [{"index": 0, "delta": {"content": 7}}]}',
        }.items()
    },
    "sse_null_choices": (
        {
            "fault": "raw",
            "content_type": "text/event-stream",
            "body": 'data: {"choices": null}\n\n',
        },
        "(no chat-completion chunk in it)",
    ),
    "nul_bytes_and_a_huge_page": (
        {"fault": "raw", "content_type": "text/html", "body": "<p>\x00\x00" + "y" * 1_000_000},
        "body starts '<p>\\x00\\x00yyy",
    ),
    "empty_body": (
        {"fault": "raw", "content_type": "application/json", "body": ""},
        "HTTP 200, content type application/json, an empty body",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_answer_that_is_not_openai_is_named_with_what_came_back(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, case: str
) -> None:
    step, expected = CASES[case]
    fake_openai.add_steps([step, {"content": "Recovered."}])
    result = run_invincat(["chat", "hello", "--json", "--cwd", str(workspace)], invincat_env)
    assert result.code == 1, result.stdout + result.stderr
    [error] = result.of_type("error")
    message = error["message"]
    assert message.startswith(
        f"The model server at {fake_openai.base_url} did not send an OpenAI-compatible response: "
    ), message
    assert expected in message, message
    assert "broke mid-response" not in message and "Internal error" not in message
    assert "\n" not in message and len(message) < 1000  # one line, the body's start only
    assert invincat_env["OPENAI_API_KEY"] not in message
    assert result.events[-1] == {**result.events[-1], "type": "turn_end", "status": "failed"}
    assert "Traceback" not in result.stderr

    # Plain output says the same on stderr; the thread stays usable.
    again = run_invincat(["chat", "again", "--resume", "--cwd", str(workspace)], invincat_env)
    assert again.code == 0, again.stdout + again.stderr
    assert "Recovered." in again.stdout


def test_the_quoted_body_is_redacted_cut_and_has_no_control_characters(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # A debugging proxy that echoes the request: the key, a terminal escape, a long tail.
    key = invincat_env["OPENAI_API_KEY"]
    body = (
        f"<pre>Authorization: Bearer {key}\x1b[2J\x1b]0;owned\x07 token=ghp_"
        + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
        + " \u202e"
        + "x" * 5000
        + "</pre>"
    )
    fake_openai.add_steps([{"fault": "raw", "content_type": "text/html", "body": body}])
    result = run_invincat(["chat", "hello", "--cwd", str(workspace)], invincat_env)
    assert result.code == 1, result.stdout + result.stderr
    [line] = [x for x in result.stderr.splitlines() if "OpenAI-compatible" in x]
    assert key not in line and "ghp_A1b2C3d4" not in line, line
    assert "[REDACTED" in line
    assert "\\x1b[2J" in line and "\\u202e" in line  # shown, escaped
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c == "\u202e" for c in line)
    assert "x" * 200 not in line  # the start of the body only
