"""'Always allow' rules: what they cover, what they must never cover, and persistence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invincat_server.runtime.approvals import (
    ApprovalPolicy,
    Decision,
    DecisionError,
    WorkspaceRuleStore,
    always_options,
    command_prefix,
)


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("pytest -q tests/", "pytest"),
        ("git status", "git status"),
        ("npm run build", "npm run"),
        ("ls -la", "ls"),
        ("pytest; rm -rf ~", "pytest; rm -rf ~"),
        ("echo $(whoami)", "echo $(whoami)"),
    ],
)
def test_command_prefix_remembers_the_safe_part(command: str, prefix: str) -> None:
    assert command_prefix(command) == prefix


def _policy(tmp_path: Path, auto: bool = False) -> ApprovalPolicy:
    return ApprovalPolicy(
        tmp_path / "ws", WorkspaceRuleStore(tmp_path / "approvals.json"), auto_approve=auto
    )


def test_reads_run_freely_and_writes_ask_by_default(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    assert not policy.needs_approval("read_file", {"path": "a"})
    assert not policy.needs_approval("grep", {"pattern": "x"})
    for tool in ("write_file", "edit_file", "execute", "web_fetch", "task", "srv__tool"):
        assert policy.needs_approval(tool, {"command": "ls", "path": "a"})


def test_auto_approve_asks_nothing(tmp_path: Path) -> None:
    assert not _policy(tmp_path, auto=True).needs_approval("execute", {"command": "rm -rf x"})


def test_session_rule_for_a_prefix_does_not_cover_chained_commands(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    session_option = always_options("execute", {"command": "pytest -q"}, tmp_path)[0]
    assert session_option.scope == "session"
    assert "pytest" in session_option.label and "session" in session_option.label
    policy.remember(session_option)
    assert not policy.needs_approval("execute", {"command": "pytest tests/unit"})
    assert policy.needs_approval("execute", {"command": "pytest; rm -rf ~"})
    assert policy.needs_approval("execute", {"command": "pytestx"})
    assert policy.needs_approval("execute", {"command": "rm -rf build"})
    # session rules die with the process
    assert _policy(tmp_path).needs_approval("execute", {"command": "pytest"})


def test_workspace_rule_for_file_writes_persists_only_for_that_workspace(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    option = always_options("write_file", {"path": "a"}, tmp_path / "ws")[1]
    assert option.scope == "workspace" and str(tmp_path / "ws") in option.label
    policy.remember(option)
    fresh = _policy(tmp_path)
    assert not fresh.needs_approval("write_file", {"path": "b"})
    assert not fresh.needs_approval("edit_file", {"path": "c"})
    assert fresh.needs_approval("execute", {"command": "ls"})
    other = ApprovalPolicy(
        tmp_path / "other", WorkspaceRuleStore(tmp_path / "approvals.json"), auto_approve=False
    )
    assert other.needs_approval("write_file", {"path": "b"})


def test_corrupt_rules_file_is_kept_aside_and_grants_nothing(tmp_path: Path) -> None:
    (tmp_path / "approvals.json").write_text("{not json", encoding="utf-8")
    policy = _policy(tmp_path)
    assert policy.needs_approval("write_file", {"path": "a"})
    assert (tmp_path / "approvals.json.corrupt").read_text() == "{not json"
    policy.remember(always_options("write_file", {}, tmp_path / "ws")[1])
    assert json.loads((tmp_path / "approvals.json").read_text())["workspaces"]


@pytest.mark.parametrize(
    "raw",
    [{"type": "approve_always"}, {"type": "edit"}, {"type": "maybe"}, {}],
)
def test_incomplete_decisions_are_refused_with_a_reason(raw: dict) -> None:
    with pytest.raises(DecisionError, match="Invalid decision"):
        Decision.parse(raw)
