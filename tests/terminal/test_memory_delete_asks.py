"""`invincat memory delete` asks first, as `threads delete` does: at a real terminal it
shows the entry and asks y/N (no = nothing deleted); `--yes` skips the question; without
a terminal (or with --json, whose stdout is the report) it refuses unless --yes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.terminal.cli_process import run_invincat
from tests.terminal.pty_terminal import Terminal

_CREATE = json.dumps(
    {
        "operations": [
            {"op": "create", "scope": "project", "section": "Tests", "content": "run pytest"}
        ]
    }
)


def _memory(env: dict[str, str], workspace: Path, *args: str) -> list[str]:
    done = run_invincat(["memory", *args, "--cwd", str(workspace)], env)
    assert done.code == 0, done.stderr
    return done.stdout.splitlines()


def _ids(env: dict[str, str], workspace: Path) -> list[str]:
    listed = json.loads("\n".join(_memory(env, workspace, "list", "--json")))
    return [e["id"] for e in listed["items"]]


def _create(env: dict[str, str], workspace: Path) -> str:
    done = run_invincat(
        ["memory", "apply", "--scope", "project", "-", "--cwd", str(workspace)], env, input=_CREATE
    )
    assert done.code == 0, done.stderr
    return str(json.loads(done.stdout)["applied"][0]["id"])


def test_memory_delete_at_a_terminal_shows_the_entry_and_asks(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    entry_id = _create(invincat_env, workspace)
    delete = ["memory", "delete", entry_id, "--reason", "obsolete", "--cwd", str(workspace)]
    term = Terminal(delete, invincat_env)
    try:
        term.expect(f"{entry_id} (project, active) Tests: run pytest")
        term.expect("Delete it?")
        term.expect("[y/N]")
        term.line("n")
        term.expect("Nothing deleted.")
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert _ids(invincat_env, workspace) == [entry_id]

    term = Terminal(delete, invincat_env)
    try:
        term.expect("[y/N]")
        term.line("y")
        term.expect(f"applied delete {entry_id}")
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert _ids(invincat_env, workspace) == []


def test_memory_delete_without_a_terminal_needs_yes(
    invincat_env: dict[str, str], workspace: Path
) -> None:
    entry_id = _create(invincat_env, workspace)
    base = ["memory", "delete", entry_id, "--reason", "obsolete", "--cwd", str(workspace)]
    # A "y" on piped stdin is not a person answering: refused, nothing deleted.
    refused = run_invincat(base, invincat_env, input="y\n")
    assert refused.code == 2
    assert refused.stdout == ""
    assert "no terminal to ask at; add --yes" in refused.stderr
    as_json = run_invincat([*base, "--json"], invincat_env)
    assert as_json.code == 2 and "--json prints the report" in as_json.stderr
    assert _ids(invincat_env, workspace) == [entry_id]

    deleted = run_invincat([*base, "--yes", "--json"], invincat_env)
    assert deleted.code == 0, deleted.stderr
    applied = json.loads(deleted.stdout)["applied"]
    assert [(a["op"], a["id"]) for a in applied] == [("delete", entry_id)]
    assert _ids(invincat_env, workspace) == []
