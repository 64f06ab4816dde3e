"""An ACP prompt (content blocks) as what the runtime takes: the user's text and the
editor context of what they attached.

Text blocks are the prompt, as typed (each kept apart too: a command such as `/plan` may
start any of them). Embedded resources (a file or selection with the client's text) and
resource links (a file the agent reads: the editor's buffer, then the disk) go through
the core's editor-context path (runtime/attachments.py, runtime/editor_context.py):
confined to the workspace, capped, redacted, in the one `<editor_context>` block — the
same checks as the language server's `context`. A refused item is a note, not the end of
the prompt. Images and audio are not offered in the prompt capabilities; if a client
sends them anyway, they are named in a note, not silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from invincat_server.runtime.attachments import add_attachment, add_note
from invincat_server.runtime.editor_context import EditorContext
from invincat_server.runtime.policy.workspace import Workspace


@dataclass
class Prompt:
    texts: list[str]
    """The text blocks, in order."""
    context: EditorContext = field(default_factory=EditorContext)

    @property
    def text(self) -> str:
        return "\n\n".join(part for part in self.texts if part)

    @property
    def attached(self) -> bool:
        return bool(self.context.attachments or self.context.notes)


def read_prompt(blocks: list[Any], workspace: Workspace) -> Prompt:
    prompt = Prompt(texts=[])
    context = prompt.context
    for block in blocks:
        if isinstance(block, TextContentBlock):
            prompt.texts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                add_attachment(context, workspace, resource.uri, resource.text)
            else:
                add_note(context, resource.uri, "binary content is not included.")
        elif isinstance(block, ResourceContentBlock):
            add_attachment(context, workspace, block.uri)
        else:
            kind = getattr(block, "type", type(block).__name__)
            add_note(context, f"({kind})", f"attachments of type {kind} are not supported.")
    return prompt


_COMMAND = re.compile(r"\s*/([A-Za-z][\w-]*)(?:\s+|$)")


def find_command(prompt: Prompt, commands: Container[str]) -> tuple[str | None, str]:
    """The first known command starting any text block (a client may put its own text, a
    buffer's name or a context note, in a block before the one the user typed), and the
    rest of that block. The command is taken out of `prompt.texts`: what remains is the
    command's input (`/plan TASK` plans the TASK with the other blocks)."""
    for index, block in enumerate(prompt.texts):
        match = _COMMAND.match(block)
        if match is not None and match.group(1) in commands:
            rest = block[match.end() :]
            prompt.texts[index] = rest
            return match.group(1), rest.strip()
    return None, ""
