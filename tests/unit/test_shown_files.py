"""Files an answer shows in a fence (runtime/shown_files.py), as Qwen2.5-Coder-1.5B wrote
them instead of calling a tool (bench run 25)."""

from __future__ import annotations

from invincat_server.runtime.shown_files import MAX_FENCES, ShownFile, is_quote, shown_files

FIXED = "def add(a, b):\n    return a + b\n"


def test_a_fence_named_by_the_line_before_it() -> None:
    text = f"The bug is the minus.\n\nHere's the corrected `calc.py`:\n\n```python\n{FIXED}```\n"
    assert shown_files(text) == [ShownFile("calc.py", FIXED)]


def test_a_fence_named_by_its_first_line() -> None:
    for first in ("# File calc.py", "# calc.py", "# file: calc.py", "// File: calc.py"):
        text = f"Here's the updated code:\n\n```python\n{first}\n{FIXED}```"
        assert shown_files(text) == [ShownFile("calc.py", FIXED)], first
    assert shown_files("```html\n<!-- site/index.html -->\n<p>x</p>\n```") == [
        ShownFile("site/index.html", "<p>x</p>\n")
    ]


def test_fences_that_name_no_single_file_or_quote_output_are_not_files() -> None:
    assert shown_files(f"```python\n{FIXED}```") == []  # named by nothing
    assert shown_files(f"Compare `a.py` and `b.py`:\n```python\n{FIXED}```") == []
    assert shown_files(f"In calc.py the function is\n```python\n{FIXED}```") == []  # no colon
    assert shown_files("Output of `run.py`:\n```text\n5\n```") == []
    assert shown_files("```diff\n# calc.py\n-x\n+y\n```") == []
    assert shown_files("Here's `calc.py`:\n```python\nunclosed") == []


def test_at_most_so_many_fences_are_taken() -> None:
    text = "".join(f"`f{i}.py`:\n```python\nx = {i}\n```\n" for i in range(MAX_FENCES + 5))
    assert len(shown_files(text)) == MAX_FENCES


def test_a_quote_is_lines_of_the_file_in_order_and_a_change_is_not() -> None:
    current = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    assert is_quote(current, current)
    assert is_quote("def test_add():\n    assert add(2, 3) == 5", current)  # a part
    assert is_quote("from calc import add  \n\ndef test_add():\n", current)  # blanks, spaces
    assert not is_quote("def test_add():\n    assert add(2, 3) == 6\n", current)
    assert not is_quote("def test_add():\nfrom calc import add\n", current)  # reordered
    assert is_quote("\n\n", current)
