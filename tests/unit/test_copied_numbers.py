"""Line numbers of read_file's view copied into what a model writes (copied_numbers.py)."""

from __future__ import annotations

import pytest

from invincat_server.runtime.tools.copied_numbers import copied_line_numbers

# As Qwen2.5-Coder-1.5B wrote calc.py in bench run 21.
RUN_21 = (
    "    1        def add(a, b):\n    2        return a + b\n    3\n    4\n"
    "    5        def area(r):\n        return 3.14159 * r * r"
)


def test_the_view_copied_with_tabs_or_spaces_is_found_from_its_first_number() -> None:
    assert copied_line_numbers(RUN_21) == 1
    assert copied_line_numbers("    12\tx = 1\n    13\ty = 2\n    14\tz = 3\n") == 12


@pytest.mark.parametrize(
    "text",
    [
        "x = [\n    1,\n    2,\n    3,\n]\n",  # numbers in code
        "1\n2\n3\n4\n",  # a file of bare numbers
        "1. first\n2. second\n3. third\n",  # a numbered list
        "    1\tx\n    3\ty\n    4\tz\n",  # not counting up by one
        "    1\tx = 1\n    2\ty = 2\n",  # two lines only
        "    1\tx = 1\nprint(x)\nprint(x)\nprint(x)\n    2\ty\n    3\tz\n",  # not most lines
        "",
        "\x00\x00",
    ],
)
def test_other_text_is_not_taken_for_it(text: str) -> None:
    assert copied_line_numbers(text) is None
