"""MCP tools as LangChain tools: `<server>__<tool>` names, JSON-schema args, text results."""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from invincat_server.runtime.extensions.mcp.client import McpConnection, McpServerError

if TYPE_CHECKING:
    import mcp_types

SEPARATOR = "__"
MAX_NAME = 64
"""OpenAI-compatible APIs accept tool names matching ^[a-zA-Z0-9_-]{1,64}$."""
OUTPUT_CAP = 30_000
"""Characters of a tool result passed to the model (same budget as `execute`)."""
_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """`<server>__<tool>`, made valid for the model API and unique among `taken`."""
    name = f"{server}{SEPARATOR}{_BAD_CHARS.sub('_', tool)}"
    if len(name) > MAX_NAME or name in taken:
        # Keep it readable and stable: a cut name plus a short hash of the original.
        suffix = hashlib.sha256(f"{server}/{tool}".encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{suffix}"
    taken.add(name)
    return name


def input_schema(tool: mcp_types.Tool) -> dict[str, Any]:
    """The tool's JSON schema as the model should see it; only fills in what the chat API
    requires of a function's parameters (an object with properties)."""
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def result_text(result: mcp_types.CallToolResult) -> str:
    """Text content joined in order; other content is named so the model knows it exists."""
    import mcp_types

    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            size = len(block.data) * 3 // 4  # base64 → bytes, close enough for a note
            parts.append(f"[{block.type} content omitted: {block.mime_type}, ~{size} bytes]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            res = block.resource
            if isinstance(res, mcp_types.TextResourceContents):
                parts.append(f"[resource {res.uri}]\n{res.text}")
            else:
                mime = res.mime_type or "binary"
                parts.append(f"[binary resource omitted: {res.uri} ({mime})]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(
                f"[resource link: {block.uri}" + (f" ({block.name})]" if block.name else "]")
            )
        else:
            parts.append(f"[{getattr(block, 'type', 'unknown')} content omitted]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    text = "\n".join(parts) if parts else "(no output)"
    if len(text) > OUTPUT_CAP:
        half = OUTPUT_CAP // 2
        cut = len(text) - OUTPUT_CAP
        text = f"{text[:half]}\n... [{cut} characters truncated] ...\n{text[-half:]}"
    return text


def build_tool(conn: McpConnection, tool: mcp_types.Tool, name: str) -> BaseTool:
    """A LangChain tool calling `tool` on `conn`. Errors (the tool's own, or the server being
    gone) come back as tool errors, so the turn goes on."""
    original = tool.name

    async def call(**arguments: Any) -> str:
        try:
            result = await conn.call(original, arguments)
        except McpServerError as exc:
            raise ToolException(str(exc)) from exc
        text = result_text(result)
        if result.is_error:
            raise ToolException(text)
        return text

    description = (tool.description or tool.title or original).strip()
    return StructuredTool(
        name=name,
        description=f"{description}\n\n(MCP tool `{original}` of server `{conn.name}`.)",
        # A dict schema is passed to the model as is; the server validates arguments.
        args_schema=input_schema(tool),
        coroutine=call,
        handle_tool_error=True,
        metadata={"mcp_server": conn.name, "mcp_tool": original},
    )
