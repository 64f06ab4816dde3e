"""Files a prompt must never get sent to the model: one outside the workspace and a
protected memory store inside it, each holding a marker a test looks for."""

from __future__ import annotations

from pathlib import Path

OUTSIDE_MARKER = "TOP-SECRET-CONTENT"
STORE_MARKER = "MEMORY-PRIVATE"


def plant_unreadable(workspace: Path) -> tuple[Path, Path]:
    """(a file next to the workspace, the project's memory store), both with markers."""
    outside = workspace.parent / "outside-secret.txt"
    outside.write_text(f"{OUTSIDE_MARKER}\n")
    store = workspace / ".invincat" / "memory_project.json"
    store.parent.mkdir(exist_ok=True)
    store.write_text(f'{{"entries": [{{"content": "{STORE_MARKER}"}}]}}\n')
    return outside, store
