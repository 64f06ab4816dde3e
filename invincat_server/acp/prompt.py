"""An ACP prompt (content blocks) as the one text the runtime takes.

Text blocks are kept as they are; an embedded resource (a file or selection the user
attached) becomes a fenced block named by its URI; a resource link becomes a line naming
the file, which the agent can read with its tools. Images and audio are not offered in
the prompt capabilities, so a client must not send them; if one does, it is named, not
silently dropped.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)


def _display(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def prompt_text(blocks: list[Any]) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            where = _display(resource.uri)
            if isinstance(resource, TextResourceContents):
                parts.append(f"Attached {where}:\n```\n{resource.text}\n```")
            else:
                parts.append(f"(Attached {where}: binary content, not included.)")
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"Referenced file: {_display(block.uri)}")
        else:
            kind = getattr(block, "type", type(block).__name__)
            parts.append(f"(An attachment of type {kind} was not included: not supported.)")
    return "\n\n".join(part for part in parts if part)
