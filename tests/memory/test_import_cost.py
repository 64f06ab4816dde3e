"""The memory package stays cheap to import: no LangChain, no front ends."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_memory_package_loads_no_heavy_or_front_end_modules() -> None:
    code = (
        "import sys, invincat_server.runtime.memory\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('langchain', 'langchain_core', 'langgraph', 'openai', 'pygls', 'lsprotocol') "
        "or m.startswith(('invincat_server.lsp', 'invincat_server.terminal'))]\n"
        "print(','.join(sorted(bad)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""
