"""The one preload list (runtime/preload.py) the warm server and the language server
share: every name in it imports, and a name that does not is reported, never skipped."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from invincat_server.runtime import preload
from invincat_server.warm.server import FRONT_END_MODULES


def test_every_preloaded_name_imports_in_a_fresh_interpreter() -> None:
    # A fresh process: in this one, other tests may already have imported a stale name's
    # replacement, or the name itself under another path.
    names = list(FRONT_END_MODULES + preload.EVERYTHING)
    code = (
        "import importlib, sys\n"
        "bad = []\n"
        f"for name in {names!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        bad.append(f'{name}: {exc!r}')\n"
        "print('\\n'.join(bad))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"names in the preload list that do not import:\n{result.stdout}"


def test_the_lists_hold_no_duplicates() -> None:
    everything = FRONT_END_MODULES + preload.LIGHT + preload.MEMORY + preload.STACK
    duplicates = {name for name in everything if everything.count(name) > 1}
    # The language server loads history with its light reads and again with the stack: a
    # no-op the second time, kept so each step stands alone.
    assert duplicates <= {"invincat_server.runtime.history"}, duplicates


def test_a_missing_module_is_an_error_naming_it(caplog: pytest.LogCaptureFixture) -> None:
    called = []
    with caplog.at_level(logging.ERROR, logger="invincat.preload"):
        failed = preload.preload(
            ("json", "invincat_server.runtime.no_such_module", "os"),
            before_each=lambda: called.append(1),
        )
    assert failed == ["invincat_server.runtime.no_such_module"]
    assert len(called) == 3  # the bad name costs itself only: the next one still loads
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert "invincat_server.runtime.no_such_module" in record.getMessage()
