"""A model answer that ends early is a failed turn over LSP too, never a completed one."""

from __future__ import annotations

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient


async def test_a_stream_closed_without_finish_reason_fails_the_turn(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.add_steps(
        [{"fault": "truncate", "content": "Half of the answer, and then nothing more."}]
    )
    ref = await lsp.chat("say something")
    end = await lsp.turn_end(ref["turnId"])
    assert end["status"] == "failed"
    errors = [e for e in lsp.turn_events(ref["turnId"]) if e["type"] == "error"]
    assert len(errors) == 1 and "broke mid-response" in errors[0]["message"]
    assert "without a finish_reason" in errors[0]["message"]


async def test_an_html_page_is_named_as_not_an_openai_response(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer
) -> None:
    # The same core sentence as `invincat chat` (tests/terminal/test_foreign_answers.py).
    page = "<html><head><title>Sign in</title></head></html>"
    fake_openai.add_steps([{"fault": "raw", "content_type": "text/html", "body": page}])
    ref = await lsp.chat("say something")
    end = await lsp.turn_end(ref["turnId"])
    assert end["status"] == "failed"
    [error] = [e for e in lsp.turn_events(ref["turnId"]) if e["type"] == "error"]
    assert error["message"].startswith(
        f"The model server at {fake_openai.base_url} did not send an OpenAI-compatible "
        "response: HTTP 200, content type text/html, body starts '<html><head><title>Sign in"
    ), error["message"]
