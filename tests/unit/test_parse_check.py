"""The note a write gets when it leaves a Python or JSON file unparsable (parse_check.py)."""

from __future__ import annotations

from pathlib import PurePath

from invincat_server.runtime.tools.parse_check import (
    MAX_CHECKED_CHARS,
    broken_by_write,
    parse_error,
)

CLI = PurePath("/p/cli.py")


def test_a_python_file_broken_by_the_write_is_named_with_the_error_and_line() -> None:
    note = broken_by_write(CLI, "cli.py", "import argparse\n", "    parser.add_argument('-v')")
    assert note == (
        " Warning: cli.py no longer parses as Python: unexpected indent (line 1). Read it "
        "and fix it before going on."
    )


def test_a_new_file_that_does_not_parse_gets_the_note_too() -> None:
    assert "no longer parses" in broken_by_write(CLI, "cli.py", None, "def f(:\n")


def test_a_file_broken_before_the_write_or_parsing_after_it_gets_none() -> None:
    assert broken_by_write(CLI, "cli.py", "def f(:\n", "def g(:\n") == ""
    assert broken_by_write(CLI, "cli.py", "x = 1\n", "x = 2\n") == ""


def test_json_is_checked_and_other_kinds_are_not() -> None:
    note = broken_by_write(PurePath("c.json"), "c.json", '{"a": 1}', '{"a": 1,}')
    assert "c.json no longer parses as JSON" in note and "line 1" in note
    assert broken_by_write(PurePath("Makefile"), "Makefile", "all:\n", "def f(:") == ""
    assert broken_by_write(PurePath("x.txt"), "x.txt", None, "{") == ""


def test_bad_input_costs_nothing() -> None:
    # A NUL byte, deep nesting, a huge file, warnings the parser would print: no note, no crash.
    assert parse_error(CLI, "x = 1\x00\n") in (None, "source code string cannot contain null bytes")
    assert parse_error(CLI, "x = " + "(" * 100_000 + ")" * 100_000) == (
        "too many nested parentheses (line 1)"
    )
    assert parse_error(PurePath("d.json"), "[" * 100_000 + "]" * 100_000) is None
    assert parse_error(CLI, "x = 1\n" + "#" * MAX_CHECKED_CHARS) is None
    assert parse_error(CLI, 's = "\\d"\n') is None


def test_a_whole_file_write_is_refused_only_when_it_breaks_a_file_that_parses() -> None:
    from invincat_server.runtime.tools.parse_check import broken_whole_file

    said = broken_whole_file(CLI, "import argparse\n", "    parser.add_argument('-v')")
    assert said is not None and said.startswith("parses as Python now and this content would")
    assert broken_whole_file(CLI, "def f(:\n", "def g(:\n") is None  # broken before
    assert broken_whole_file(CLI, "x = 1\n", "x = 2\n") is None
    assert broken_whole_file(PurePath("notes.txt"), "a\n", "    (") is None  # not checked
    assert "as JSON" in (broken_whole_file(PurePath("c.json"), "{}", "{,}") or "")
