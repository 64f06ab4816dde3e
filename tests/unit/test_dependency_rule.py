"""The core must stay usable without any front end: `runtime/` never pulls in LSP code."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "invincat_server" / "runtime"
FORBIDDEN = ("pygls", "lsprotocol", "invincat_server.lsp", "invincat_server.terminal")


def test_importing_runtime_loads_no_lsp_modules() -> None:
    code = (
        "import sys, invincat_server.runtime, invincat_server.runtime.session, "
        "invincat_server.runtime.agents.main_agent, invincat_server.runtime.tools\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol') "
        "or m.startswith(('invincat_server.lsp', 'invincat_server.terminal'))]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"runtime imported front-end modules: {out}"


def test_no_runtime_source_file_imports_a_front_end() -> None:
    offenders = []
    for path in RUNTIME.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.startswith(FORBIDDEN)]
    assert offenders == []
