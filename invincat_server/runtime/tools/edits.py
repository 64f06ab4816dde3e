"""Pure text operations behind edit_file and change previews: no I/O here."""

from __future__ import annotations

import difflib

__all__ = ["EditError", "EditTextNotFound", "apply_edit", "unified_diff"]


class EditError(ValueError):
    """An edit cannot be applied; the message tells the model how to fix its call."""


class EditTextNotFound(EditError):
    """The edit's `old_string` is not in the file."""


def apply_edit(
    text: str,
    old_string: str,
    new_string: str,
    replace_all: bool = False,
    *,
    path: str | None = None,
) -> tuple[str, int]:
    """Replace ``old_string`` with ``new_string`` in ``text``.

    Returns the new text and the number of replacements. Without ``replace_all`` the
    match must be unique, because replacing the wrong one of several identical snippets
    is a silent, hard-to-spot corruption. ``path`` only improves the error messages.

    If the file uses CRLF line endings and ``old_string`` uses bare LF (models see lines,
    not line terminators), the match is retried with CRLF and ``new_string`` is converted
    to CRLF too, so the file's line endings stay consistent.
    """
    where = path if path is not None else "the file"
    if old_string == "":
        raise EditError(
            "old_string is empty; give the exact text to replace (use write_file to "
            "create or overwrite a whole file)"
        )
    if old_string == new_string:
        raise EditError("old_string and new_string are identical; there is nothing to change")

    count = text.count(old_string)
    if count == 0 and "\r\n" in text and "\n" in old_string and "\r\n" not in old_string:
        crlf_old = old_string.replace("\n", "\r\n")
        crlf_count = text.count(crlf_old)
        if crlf_count:
            old_string = crlf_old
            new_string = new_string.replace("\r\n", "\n").replace("\n", "\r\n")
            count = crlf_count

    if count == 0:
        raise EditTextNotFound(
            f"old_string not found in {where}; read the file again to get the exact text"
        )
    if count > 1 and not replace_all:
        raise EditError(
            f"old_string occurs {count} times in {where}; add context to make it unique "
            "or set replace_all"
        )
    if replace_all:
        return text.replace(old_string, new_string), count
    return text.replace(old_string, new_string, 1), 1


_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(path: str, old_text: str | None, new_text: str) -> str:
    """Unified diff of a file change with ``a/``/``b/`` headers, as git would print it.

    ``old_text`` None means the file is new (``--- /dev/null``). Returns "" when nothing
    changes. A last line without a newline gets the standard "\\ No newline at end of
    file" marker so that such a change is visible and the diff stays patch-applicable.
    """
    old_lines = [] if old_text is None else _split_lines(old_text)
    new_lines = _split_lines(new_text)
    fromfile = "/dev/null" if old_text is None else f"a/{path}"
    out: list[str] = []
    for line in difflib.unified_diff(old_lines, new_lines, fromfile=fromfile, tofile=f"b/{path}"):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n")
            out.append(_NO_NEWLINE)
    return "".join(out)


def _split_lines(text: str) -> list[str]:
    # Split on "\n" only: str.splitlines also breaks on \r, \f, \u2028 and friends,
    # which would invent line boundaries (and bogus "no newline" markers) that git and
    # editors do not see.
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
