"""The team's instruction files (AGENTS.md, CLAUDE.md, .github/copilot-instructions.md,
GEMINI.md, Cursor's rules) as a read-only rules tier: read confined and capped (files.py,
cursor_rules.py), shown to the main agent ahead of governed memory (render.py), listed
next to memory by every front end.

Nothing here writes those files, and governed memory is never written into them. Cheap to
import: no pydantic, no LangChain; redaction is loaded when a block is first rendered.
"""

from __future__ import annotations

from invincat_server.runtime.instructions.files import (
    InstructionFile,
    InstructionSet,
    instruction_list,
    read_instructions,
)
from invincat_server.runtime.instructions.render import InstructionFiles, render_block
from invincat_server.runtime.instructions.settings import (
    KINDS,
    InstructionSettings,
    load_instruction_settings,
)

__all__ = [
    "KINDS",
    "InstructionFile",
    "InstructionFiles",
    "InstructionSet",
    "InstructionSettings",
    "instruction_list",
    "load_instruction_settings",
    "read_instructions",
    "render_block",
]
