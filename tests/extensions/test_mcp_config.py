"""MCP config parsing and merging, trust fingerprints, tool naming and result conversion."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types
import pytest

from invincat_server.runtime.extensions.mcp.config import (
    McpConfigError,
    load_file,
    merge,
    parse_server,
)
from invincat_server.runtime.extensions.mcp.tools import input_schema, result_text, tool_name
from invincat_server.runtime.extensions.mcp.trust import TrustStore


def _parse(raw: dict, env: dict[str, str] | None = None):
    return parse_server("srv", raw, source=Path("/x/mcp.json"), scope="user", env=env or {})


def test_stdio_and_http_entries_with_environment_variables() -> None:
    stdio = _parse(
        {"command": "${BIN:-npx}", "args": ["-y", "${PKG}"], "env": {"K": "${TOKEN}"}},
        {"PKG": "server-x", "TOKEN": "s3cret"},
    )
    assert (stdio.transport, stdio.command, stdio.args) == ("stdio", "npx", ("-y", "server-x"))
    assert stdio.env == {"K": "s3cret"}
    http = _parse({"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${T}"}}, {"T": "t"})
    assert (http.transport, http.url) == ("http", "https://h/mcp")
    assert http.headers == {"Authorization": "Bearer t"}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"args": ["x"]}, "needs `command`"),
        ({"command": "x", "env": {"A": "${MISSING}"}}, "MISSING is not set"),
        ({"type": "sse", "url": "http://h/sse"}, "legacy SSE transport is not supported"),
        ({"command": "x", "autoApprove": "*"}, "`autoApprove` must be a list"),
        ({"url": "ftp://h"}, "http:// or https://"),
        ({"command": "x", "timeout": -1}, "positive number"),
    ],
)
def test_bad_entries_say_what_is_wrong(raw: dict, message: str) -> None:
    with pytest.raises(McpConfigError, match="server 'srv'") as err:
        _parse(raw)
    assert message in str(err.value)


def test_later_files_replace_whole_entries_and_can_disable(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    user.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "a": {"command": "a", "autoApprove": ["*"]},
                    "b": {"command": "b"},
                    "bad": {"url": 1},
                }
            }
        )
    )
    project = tmp_path / "project.json"
    project.write_text(
        json.dumps({"mcpServers": {"a": {"command": "a2"}, "b": {"disabled": True}}})
    )
    configs = [load_file(user, "user"), load_file(project, "project")]
    assert all(c is not None for c in configs)
    assert "server 'bad'" in configs[0].errors[0]  # type: ignore[union-attr]
    merged = merge(configs)  # type: ignore[arg-type]
    assert list(merged) == ["a"]
    assert merged["a"].command == "a2" and merged["a"].auto_approve == frozenset()
    assert load_file(tmp_path / "missing.json", "user") is None
    (tmp_path / "broken.json").write_text("{nope")
    assert "not valid JSON" in load_file(tmp_path / "broken.json", "user").errors[0]  # type: ignore[union-attr]


def test_trust_follows_the_exact_content_of_every_project_config(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".invincat").mkdir(parents=True)
    first = root / ".mcp.json"
    first.write_text('{"mcpServers": {}}')
    store = TrustStore(tmp_path / "home" / "trusted_projects.json")
    assert not store.is_trusted(root, [first])
    store.trust(root, [first])
    assert store.is_trusted(root, [first])
    first.write_text('{"mcpServers": {"x": {"command": "evil"}}}')
    assert not store.is_trusted(root, [first])
    store.trust(root, [first])
    second = root / ".invincat" / "mcp.json"
    second.write_text("{}")
    assert not store.is_trusted(root, [first, second])  # a new file is a change too


def test_tool_names_are_valid_for_the_model_api_and_unique() -> None:
    taken: set[str] = {"ls"}
    assert tool_name("docs", "search.pages", taken) == "docs__search_pages"
    again = tool_name("docs", "search.pages", taken)
    assert again != "docs__search_pages" and again.startswith("docs__search_pages_")
    long = tool_name("server", "x" * 100, taken)
    assert len(long) == 64 and long.startswith("server__xxx")


def _tool(schema: dict) -> mcp_types.Tool:
    return mcp_types.Tool(name="t", input_schema=schema)


def test_schemas_pass_through_with_only_required_fill_ins() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "minLength": 2}}}
    assert input_schema(_tool(schema)) == schema
    assert input_schema(_tool({})) == {"type": "object", "properties": {}}


def test_results_keep_text_and_name_other_content() -> None:
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(text="first"),
            mcp_types.ImageContent(data="aGVsbG8=", mime_type="image/png"),
            mcp_types.EmbeddedResource(
                resource=mcp_types.TextResourceContents(uri="file:///a.txt", text="inside")
            ),
            mcp_types.ResourceLink(uri="https://h/r", name="r"),
        ]
    )
    text = result_text(result)
    assert text.splitlines()[0] == "first"
    assert "[image content omitted: image/png, ~6 bytes]" in text
    assert "[resource file:///a.txt]\ninside" in text and "[resource link: https://h/r (r)]" in text
    structured = mcp_types.CallToolResult(content=[], structured_content={"n": 1})
    assert json.loads(result_text(structured)) == {"n": 1}
    huge = result_text(mcp_types.CallToolResult(content=[mcp_types.TextContent(text="y" * 50_000)]))
    assert "characters truncated" in huge and len(huge) < 31_000
