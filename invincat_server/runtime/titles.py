"""Thread titles: the one place a title is made from what the user typed.

A title is stored in `threads.sqlite` and listed by every front end (`threads list`,
the editors' thread pickers, ACP's session list), so it goes through redaction like
everything else Invincat keeps beyond the conversation: the whole prompt is redacted,
then cut, so neither a secret nor half of one survives. `ThreadRecords.touch_thread`
calls this for every caller (terminal, language server, ACP), so no front end can store
a title that skipped it.
"""

from __future__ import annotations

import re

from invincat_server.runtime.memory.redaction import redact_and_cut

MAX_TITLE_CHARS = 80


# Control characters (NUL, ESC, DEL, C1): a title is printed by `threads list`, and an
# escape sequence in a client's prompt must not reach the user's terminal through it.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def thread_title(text: str) -> str:
    """The stored title for a thread whose first prompt (or client-given name) is `text`:
    control characters dropped, whitespace collapsed, redacted, then cut to 80
    characters (only the prompt's start is redacted, so a huge prompt costs little)."""
    return redact_and_cut(" ".join(_CONTROL.sub(" ", text).split()), MAX_TITLE_CHARS, marker="")
