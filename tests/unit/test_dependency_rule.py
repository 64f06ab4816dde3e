"""The core must stay usable without any front end: `runtime/` never pulls in LSP code."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.imports import modules_after

RUNTIME = Path(__file__).resolve().parents[2] / "invincat_server" / "runtime"
ACP = RUNTIME.parent / "acp"
FORBIDDEN = (
    "pygls",
    "lsprotocol",
    "acp",
    "invincat_server.lsp",
    "invincat_server.terminal",
    "invincat_server.acp",
)
ACP_FORBIDDEN = ("pygls", "lsprotocol", "invincat_server.lsp", "invincat_server.terminal")


def test_importing_runtime_loads_no_lsp_modules() -> None:
    loaded = modules_after(
        "import invincat_server.runtime, invincat_server.runtime.session, "
        "invincat_server.runtime.agents.main_agent, invincat_server.runtime.tools"
    )
    bad = [
        m
        for m in loaded
        if m.split(".")[0] in ("pygls", "lsprotocol")
        or m == "acp"
        or m.startswith("acp.")
        or m.startswith(("invincat_server.lsp", "invincat_server.terminal", "invincat_server.acp"))
    ]
    assert bad == [], f"runtime imported front-end modules: {bad}"


def _imports(package: Path, forbidden: tuple[str, ...]) -> list[str]:
    offenders = []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.name}: {n}"
                for n in names
                if any(n == f or n.startswith(f + ".") for f in forbidden)
            ]
    return offenders


def test_no_runtime_source_file_imports_a_front_end() -> None:
    assert _imports(RUNTIME, FORBIDDEN) == []


def test_the_acp_front_end_imports_no_other_front_end() -> None:
    assert _imports(ACP, ACP_FORBIDDEN) == []
