"""Thread titles: the one place a title is made from what the user typed.

A title is stored in `threads.sqlite` and listed by every front end (`threads list`,
the editors' thread pickers, ACP's session list), so it goes through redaction like
everything else Invincat keeps beyond the conversation: the whole prompt is redacted,
then cut, so neither a secret nor half of one survives. `ThreadRecords.touch_thread`
calls this for every caller (terminal, language server, ACP), so no front end can store
a title that skipped it.
"""

from __future__ import annotations

from invincat_server.runtime.memory.redaction import redact_and_cut

MAX_TITLE_CHARS = 80


def thread_title(text: str) -> str:
    """The stored title for a thread whose first prompt (or client-given name) is `text`:
    whitespace collapsed, redacted, then cut to 80 characters."""
    return redact_and_cut(" ".join(text.split()), MAX_TITLE_CHARS, marker="")
