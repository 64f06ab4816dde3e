"""What the shell-sandbox tests (bwrap and Landlock) share: a scripted `execute` call, a
real `invincat chat --json` run, and the tool results and error notices it printed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.terminal.cli_process import Result, run_invincat


def execute_step(command: str, **extra: Any) -> dict[str, Any]:
    """A fake-model step that calls `execute` with `command` (and any other arguments)."""
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command, **extra}}]}


def chat(project: Path, env: dict[str, str], *flags: str, input: str = "", **more: str) -> Result:
    """One `invincat chat go --json` in `project`; it must exit 0."""
    result = run_invincat(
        ["chat", "go", "--json", "--cwd", str(project), *flags], {**env, **more}, input=input
    )
    assert result.code == 0, result.stderr
    return result


def tool_results(result: Result) -> list[str]:
    return [str(r["content"]) for r in result.of_type("tool_result")]


def error_text(result: Result) -> str:
    return " ".join(str(e.get("message", "")) for e in result.of_type("error"))
