"""The ordinary tasks of `bench/real_model.py`: a small project each, a prompt, and a check
of the outcome (a file's content, a test run, an answer, a stored memory), never of how
the model got there."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Outcome:
    """What a check sees: the project after the turn and the answer the model gave."""

    project: Path
    answer: str
    events: list[dict[str, object]]
    memory: Callable[[], str]
    """The memory entries' text (`invincat memory list --json`), read only when asked."""


@dataclass(frozen=True)
class Task:
    name: str
    prompt: str
    check: Callable[[Outcome], bool]
    files: dict[str, str] = field(default_factory=dict)
    memory: bool = False
    """Run the memory agent after the turn (off elsewhere: it doubles a turn's model time)."""
    plan: bool = False
    """`invincat chat --plan`: the planner proposes, `--yes` approves, the agent executes."""
    needs: tuple[str, ...] = ()
    """Modules the check runs in the bench's own interpreter (`python -m pytest`): without
    them a check fails whatever the model did, so the bench refuses to start."""


def _read(project: Path, name: str) -> str:
    try:
        return (project / name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _runs(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=project, capture_output=True, text=True, timeout=120
    )


def _passes(project: Path, code: str) -> bool:
    """`code` run in the project exits 0 (it asserts what the task asked for)."""
    return _runs(project, "-c", code).returncode == 0


def _pytest_passes(project: Path, test_file: str) -> bool:
    done = _runs(project, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file)
    return done.returncode == 0 and " passed" in done.stdout


def _has_docstring(project: Path, path: str, function: str) -> bool:
    try:
        tree = ast.parse(_read(project, path))
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return bool(ast.get_docstring(node))
    return False


def _json_value(project: Path, path: str, key: str) -> object:
    try:
        return json.loads(_read(project, path)).get(key, "missing")
    except (ValueError, AttributeError):
        return "unreadable"


def _planned(outcome: Outcome) -> bool:
    return any(e.get("type") == "todos" and e.get("items") for e in outcome.events)


CALC = "def add(a, b):\n    return a - b\n\n\ndef area(r):\n    return 3.14159 * r * r\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"

# The four first (explain, fix a test, remember, plan): a run stopped early has them.
TASKS: list[Task] = [
    Task(
        "explain_file",
        "Read calc.py and tell me in one sentence what the function `area` computes.",
        lambda o: any(word in o.answer.lower() for word in ("circle", "radius")),
        {"calc.py": CALC},
    ),
    Task(
        "fix_failing_test",
        "The test in test_calc.py fails. Fix the bug in calc.py (do not change the test).",
        lambda o: (
            _read(o.project, "test_calc.py") == TEST_CALC
            and _pytest_passes(o.project, "test_calc.py")
        ),
        {"calc.py": CALC, "test_calc.py": TEST_CALC},
        needs=("pytest",),
    ),
    Task(
        "remember_convention",
        "Remember this convention for this project: Makefiles are always indented with tabs.",
        lambda o: all(word in o.memory().lower() for word in ("makefile", "tab")),
        memory=True,
    ),
    Task(
        "plan_change",
        "Add a --verbose flag to cli.py that prints 'verbose on' when given.",
        lambda o: (
            _planned(o)
            and _runs(o.project, "cli.py", "--verbose").stdout.strip().startswith("verbose on")
        ),
        {
            "cli.py": "import argparse\n\nparser = argparse.ArgumentParser()\n"
            "args = parser.parse_args()\n",
        },
        plan=True,
    ),
    Task(
        "create_file",
        "Create a file hello.txt containing exactly one line: Hello, world",
        lambda o: _read(o.project, "hello.txt").strip() == "Hello, world",
    ),
    Task(
        "add_function",
        "Add a function `is_even(n)` to parity.py that returns True when n is even.",
        lambda o: _passes(
            o.project,
            "from parity import is_even, is_odd\n"
            "assert is_even(4) is True and is_even(7) is False and is_odd(3)",
        ),
        {"parity.py": "def is_odd(n):\n    return n % 2 == 1\n"},
    ),
    Task(
        "rename_function",
        "Rename the function `getData` in util.py to `get_data`, and update its use in main.py.",
        lambda o: (
            "getData" not in _read(o.project, "util.py") + _read(o.project, "main.py")
            and _runs(o.project, "main.py").stdout.strip() == "42"
        ),
        {
            "util.py": "def getData():\n    return 42\n",
            "main.py": "from util import getData\n\nprint(getData())\n",
        },
    ),
    Task(
        "fix_syntax_error",
        "Running broken.py fails with a SyntaxError. Fix it.",
        lambda o: _runs(o.project, "broken.py").stdout.strip() == "ok",
        {"broken.py": "def main()\n    print('ok')\n\n\nmain()\n"},
    ),
    Task(
        "find_definition",
        "Which file in this project defines the class `Invoice`? Answer with its path.",
        lambda o: "billing/models.py" in o.answer,
        {
            "billing/models.py": "class Invoice:\n    total = 0\n",
            "billing/views.py": "from billing.models import Invoice\n",
            "shop/models.py": "class Order:\n    pass\n",
        },
    ),
    Task(
        "edit_json",
        'In settings.json, set "debug" to false and leave the other keys as they are.',
        lambda o: (
            _json_value(o.project, "settings.json", "debug") is False
            and _json_value(o.project, "settings.json", "port") == 8080
        ),
        {"settings.json": '{\n  "debug": true,\n  "port": 8080\n}\n'},
    ),
    Task(
        "add_docstring",
        "Add a one-line docstring to the function `slugify` in text.py.",
        lambda o: (
            _has_docstring(o.project, "text.py", "slugify")
            and _passes(o.project, "from text import slugify; assert slugify('A b') == 'a-b'")
        ),
        {"text.py": "def slugify(s):\n    return s.lower().replace(' ', '-')\n"},
    ),
    Task(
        "write_test",
        "Write a pytest file test_strings.py with a test for the function `reverse` in strings.py.",
        lambda o: (
            "reverse" in _read(o.project, "test_strings.py")
            and _pytest_passes(o.project, "test_strings.py")
        ),
        {"strings.py": "def reverse(s):\n    return s[::-1]\n"},
        needs=("pytest",),
    ),
]
