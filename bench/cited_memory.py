"""The cited-memory store both start-up benchmarks read (bench_cli.py, bench_lsp.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CITED_ENTRIES = 20


def cited_operations(project: Path) -> list[dict[str, Any]]:
    """Write CITED_ENTRIES files into `project`; the `create` operations of one project
    entry per file, each citing two of its lines."""
    operations = []
    for i in range(CITED_ENTRIES):
        (project / f"module_{i}.py").write_text(f"def step_{i}():\n    return {i}\n" * 20)
        operations.append(
            {
                "op": "create",
                "scope": "project",
                "section": "Code",
                "content": f"step_{i} in module_{i}.py returns its number ({i})",
                "citations": [{"path": f"module_{i}.py", "start_line": 1, "end_line": 2}],
            }
        )
    return operations


def make_first_stale(project: Path) -> None:
    """Edit the first cited file, so that exactly one entry is stale."""
    (project / "module_0.py").write_text("def step_0():\n    return -1\n")
