"""A note for the model when its write leaves a Python or JSON file that no longer parses.

Aider lints each file after it edits it and hands the errors back to the model; Cline shows
the new problems after each save. Small models need it most: Qwen2.5-Coder-1.5B replaced
cli.py with one indented line, was told "Wrote 1 line", and said it was done (bench run
20). Only a file that parsed before the write (or is new) gets the note, so a file that was
already broken does not nag, and only the standard library's own parsers are used: `ast`
for Python (it never runs the code) and `json`. Bounded: a file above 1 MB is not checked.
"""

from __future__ import annotations

import ast
import json
import warnings
from pathlib import PurePath

MAX_CHECKED_CHARS = 1_000_000

_PYTHON = (".py", ".pyi")


def parse_error(path: PurePath, text: str) -> str | None:
    """Why `text` does not parse as the kind of file `path` names, or None (it parses, it
    is of another kind, or it is too big to check)."""
    suffix = path.suffix.lower()
    if len(text) > MAX_CHECKED_CHARS:
        return None
    if suffix in _PYTHON:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # `invalid escape sequence`: not ours to print
                ast.parse(text, filename=path.name)
        except SyntaxError as exc:  # a NUL byte too: no Python source holds one
            return f"{exc.msg} (line {exc.lineno})" if exc.lineno else str(exc.msg)
        except (ValueError, MemoryError, RecursionError):  # a NUL byte (older Pythons), depth
            return None
        return None
    if suffix == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            return f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
        except RecursionError:
            return None
    return None


def broken_by_write(path: PurePath, display: str, old_text: str | None, new_text: str) -> str:
    """The sentence to add to a write's result when it left `path` unparsable and it was
    parsable (or absent) before; '' otherwise."""
    error = parse_error(path, new_text)
    if error is None:
        return ""
    if old_text is not None and parse_error(path, old_text) is not None:
        return ""  # broken before this write too: not news
    kind = "JSON" if path.suffix.lower() == ".json" else "Python"
    return (
        f" Warning: {display} no longer parses as {kind}: {error}. Read it and fix it "
        "before going on."
    )


def broken_whole_file(path: PurePath, old_text: str, new_text: str) -> str | None:
    """Why a write_file of `new_text` is refused, when `path` parses now and `new_text`
    would not (the rest of the sentence after the file's name); None otherwise.

    write_file sends the whole file, so unlike an edit (one of several that may each leave
    it half done) content that does not parse is a mistake: Qwen2.5-Coder-1.5B, having
    fixed calc.py, replaced test_calc.py with one indented line of it, and the test it was
    told not to touch was gone (bench run 28). A file that was already broken, or is new,
    is written as ever (the note above then tells of it)."""
    error = parse_error(path, new_text)
    if error is None or parse_error(path, old_text) is not None:
        return None
    kind = "JSON" if path.suffix.lower() == ".json" else "Python"
    return (
        f"parses as {kind} now and this content would not: {error}. Nothing was written. "
        "write_file replaces the whole file: send every line of it as it should be, or "
        "change only part of it with edit_file."
    )
