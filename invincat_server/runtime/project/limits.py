"""Limits every front end applies to what a user sends, with one wording.

Checked in the core (`Session.start_turn`), so `invincat chat`, the language server and
ACP refuse an over-long prompt with the same sentence; the language server also checks
before it routes a chat to a project, so a huge prompt is refused before any work.
"""

from __future__ import annotations

MAX_PROMPT_CHARS = 1_000_000
"""The longest prompt a turn accepts, in characters (a model's context is far smaller:
past this the text belongs in a file the assistant reads)."""


def prompt_problem(prompt: str) -> str | None:
    """Why `prompt` cannot start a turn (what to do instead), or None."""
    if len(prompt) > MAX_PROMPT_CHARS:
        return (
            f"The prompt is {len(prompt):,} characters; the limit is {MAX_PROMPT_CHARS:,}. "
            "Save the text to a file in the workspace and ask Invincat to read it instead."
        )
    return None
