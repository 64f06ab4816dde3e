"""web_fetch: address checks on every hop, HTML to text, size and time limits, approval
(main agent and planner). Only loopback test servers are ever contacted."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from invincat_server.runtime.extensions.web_fetch import LOOPBACK_ENV
from invincat_server.runtime.tools.web import FetchLimits, LoopbackAllowance, build_web_tools
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.extensions.conftest import SessionFactory, Site, drive, tool_messages, tool_names

PAGE = """<!doctype html><html><head><title>Local Test Page</title>
<style>body { color: red }</style><script>var secret = "do not show";</script></head>
<body><h1>Release notes</h1><p>Version <b>2.0</b> adds a <a href="/docs/api">new API</a>.</p>
<ul><li>faster</li><li>smaller</li></ul><pre>pip install thing</pre></body></html>"""


async def _fetch(url: str, **kwargs: object) -> tuple[str, str]:
    """(status, content) of one web_fetch tool call."""
    limits = kwargs.pop("limits", None)
    allow = kwargs.pop("allow", None)
    [tool] = build_web_tools(limits, allow)  # type: ignore[arg-type]
    message = await tool.ainvoke(
        {"type": "tool_call", "id": "c1", "name": "web_fetch", "args": {"url": url}}
    )
    return message.status, str(message.content)


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "file:///etc/passwd",
        "http://user:pass@example.com/",
        "http://127.0.0.1/",
        "http://localhost:8080/",
        "http://[::1]/",
        "http://0x7f000001/",  # loopback spelled in hex; caught after resolution
        "http://[::ffff:10.0.0.1]/",
        "ftp://example.com/file",
    ],
)
async def test_refuses_non_public_targets_and_unsafe_urls(url: str) -> None:
    status, content = await _fetch(url)
    assert status == "error"
    assert content.startswith("Refused"), content


async def test_fetches_a_local_page_as_text_when_its_loopback_port_is_allowed(site: Site) -> None:
    site.page("/notes", PAGE)
    status, content = await _fetch(
        f"{site.url}/notes", allow=LoopbackAllowance(ports=frozenset({site.port}))
    )
    assert status == "success", content
    assert f"URL: {site.url}/notes" in content and "Content-Type: text/html" in content
    assert "# Release notes" in content
    assert f"Version **2.0** adds a [new API]({site.url}/docs/api)." in content
    assert "- faster\n- smaller" in content and "```\npip install thing\n```" in content
    assert "secret" not in content and "color" not in content


async def test_every_redirect_hop_is_checked(site: Site, other_site: Site) -> None:
    allow = LoopbackAllowance(ports=frozenset({site.port}))
    site.page("/page", "<p>landed</p>")
    site.redirect("/same", "/page")
    site.redirect("/to-other-port", f"{other_site.url}/page")
    site.redirect("/to-metadata", "http://169.254.169.254/latest/meta-data/")
    site.redirect("/to-private", "http://10.0.0.1/admin")

    status, content = await _fetch(f"{site.url}/same", allow=allow)
    assert status == "success" and "landed" in content
    assert f"Redirected from: {site.url}/same" in content

    for path, target in [
        ("/to-other-port", "127.0.0.1, a loopback address"),
        ("/to-metadata", "169.254.169.254, a link-local"),
        ("/to-private", "10.0.0.1, a private address"),
    ]:
        status, content = await _fetch(f"{site.url}{path}", allow=allow)
        assert status == "error" and content.startswith("Refused"), content
        assert target in content
    assert other_site.hits == []  # refused before any request was sent


async def test_size_limit_stops_the_download_and_says_so(site: Site) -> None:
    site.page("/big", "x" * 300_000, content_type="text/plain")
    status, content = await _fetch(
        f"{site.url}/big",
        allow=LoopbackAllowance(any_port=True),
        limits=FetchLimits(max_bytes=10_000, max_chars=4_000),
    )
    assert status == "success"
    assert "[download stopped at 10000 bytes; the page is longer]" in content
    assert "[text cut at 4000 of 10000 characters]" in content
    assert "x" * 4_000 in content and "x" * 4_001 not in content


async def test_time_limit_stops_a_slow_server(site: Site) -> None:
    def slow(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(3)
        handler.send_response(200)
        handler.end_headers()

    site.routes["/slow"] = slow
    started = time.monotonic()
    status, content = await _fetch(
        f"{site.url}/slow", allow=LoopbackAllowance(any_port=True), limits=FetchLimits(timeout=0.5)
    )
    assert status == "error" and "took longer than 0.5s" in content
    assert time.monotonic() - started < 2


async def test_binary_content_and_http_errors_are_tool_errors(site: Site) -> None:
    site.page("/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00", content_type="image/png")
    allow = LoopbackAllowance(any_port=True)
    status, content = await _fetch(f"{site.url}/logo.png", allow=allow)
    assert status == "error" and "image/png" in content
    status, content = await _fetch(f"{site.url}/missing", allow=allow)
    assert status == "error" and content.startswith("HTTP 404")


def test_loopback_allowance_reads_ports_or_any() -> None:
    assert LoopbackAllowance.parse("8080, 8081").ports == {8080, 8081}
    assert LoopbackAllowance.parse("1").any_port and LoopbackAllowance.parse(True).any_port
    assert LoopbackAllowance.parse(None) == LoopbackAllowance.parse("0") == LoopbackAllowance()


async def test_web_fetch_asks_for_approval_and_the_page_reaches_the_model(
    fake_openai: FakeOpenAIServer, site: Site, open_session: SessionFactory
) -> None:
    site.page("/notes", PAGE)
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "web_fetch", "arguments": {"url": f"{site.url}/notes"}}]},
            {"match": {"has_tool_result": True}, "content": "read it"},
        ]
    )
    session = await open_session(options={"allow_loopback_fetch": [site.port]})
    events = await drive(session, "read the notes")
    [asked] = [e for e in events if e.type == "approval_requested"]
    assert asked.tool_name == "web_fetch" and asked.args == {"url": f"{site.url}/notes"}
    assert any(
        "# Release notes" in m["content"] for m in tool_messages(fake_openai.chat_requests())
    )


async def test_planner_can_use_web_fetch_and_it_is_approval_gated(
    fake_openai: FakeOpenAIServer,
    site: Site,
    open_session: SessionFactory,
    monkeypatch: pytest.MonkeyPatch,
    workspace: Path,
) -> None:
    monkeypatch.setenv(LOOPBACK_ENV, str(site.port))  # the env form subprocess tests use
    site.page("/spec", "<h2>Spec</h2><p>Use port 9000.</p>")
    todos = [{"content": "Configure port 9000"}]
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "web_fetch", "arguments": {"url": f"{site.url}/spec"}}]},
            {"match": {"last_user_contains": "plan"}, "tool_calls": [
                {"name": "write_todos", "arguments": {"todos": todos}}]},
            {"match": {"last_user_contains": "plan"}, "tool_calls": [
                {"name": "approve_plan", "arguments": {"todos": todos}}]},
            {"content": "executed", "times": 3},
        ]
    )  # fmt: skip
    session = await open_session()
    turn = await session.start_turn("plan the port change", mode="plan")
    asked = []
    async for event in turn.events():
        if event.type == "approval_requested":
            asked.append((event.kind, event.tool_name, event.agent))
            await session.resolve(event.approval_id, {"type": "approve"})
    assert asked[0] == ("tool", "web_fetch", "planner")
    assert ("plan", "approve_plan", "planner") in asked
    assert "web_fetch" in tool_names(fake_openai.chat_requests()[0])
    assert any("## Spec" in m["content"] for m in tool_messages(fake_openai.chat_requests()))
