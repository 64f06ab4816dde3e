"""Seeing and revoking 'always' rules (runtime/policy/rule_listing.py): stable ids, the
granted label, revoke by id under the lock, bad input costing only itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.approvals import ApprovalPolicy, WorkspaceRuleStore, always_options
from invincat_server.runtime.policy import rule_listing
from invincat_server.runtime.policy.rule_listing import RuleError, RulesFileDamaged, UnknownRule
from invincat_server.runtime.policy.settings_watch import SettingsWatch


def _policy(home: Path, workspace: Path) -> ApprovalPolicy:
    return ApprovalPolicy(
        workspace, WorkspaceRuleStore(home / "approvals.json"), auto_approve=False
    )


def _grant(policy: ApprovalPolicy, tool: str, args: dict[str, Any], scope: str) -> str:
    option = next(o for o in always_options(tool, args, policy.workspace) if o.scope == scope)
    return policy.remember(option)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("execute", {"command": "pytest -q"}),
        ("execute", {"command": "git push origin"}),
        ("write_file", {"path": "a.txt", "content": "x"}),
        ("web_fetch", {"url": "https://example.com"}),
    ],
)
@pytest.mark.parametrize("scope", ["session", "workspace"])
def test_a_listed_rule_says_what_the_prompt_said_when_it_was_granted(
    tmp_path: Path, tool: str, args: dict[str, Any], scope: str
) -> None:
    policy = _policy(tmp_path, tmp_path / "ws")
    shown = _grant(policy, tool, args, scope)
    [listed] = policy.list_rules()
    assert listed.covers == shown
    assert listed.scope == scope
    assert listed.workspace == str(tmp_path / "ws")
    assert listed.id.startswith("r_") and len(listed.id) == 14


def test_ids_are_stable_across_processes_and_distinct(tmp_path: Path) -> None:
    policy = _policy(tmp_path, tmp_path / "ws")
    _grant(policy, "execute", {"command": "pytest"}, "workspace")
    _grant(policy, "execute", {"command": "ls"}, "workspace")
    first = [r.id for r in policy.list_rules()]
    again = [r.id for r in _policy(tmp_path, tmp_path / "ws").list_rules()]
    assert first == again and len(set(first)) == 2


def test_revoke_removes_only_that_rule_and_the_call_asks_again(tmp_path: Path) -> None:
    policy = _policy(tmp_path, tmp_path / "ws")
    other = _policy(tmp_path, tmp_path / "other")
    _grant(policy, "execute", {"command": "pytest"}, "workspace")
    _grant(policy, "execute", {"command": "ls"}, "workspace")
    _grant(policy, "execute", {"command": "ls"}, "session")
    _grant(other, "execute", {"command": "pytest"}, "workspace")
    target = next(r for r in policy.list_rules() if r.scope == "workspace" and r.command == "ls")

    revoked = policy.revoke_rule(target.id)

    assert revoked == target
    assert [(r.scope, r.command) for r in policy.list_rules()] == [
        ("session", "ls"),
        ("workspace", "pytest"),
    ]
    assert [r.command for r in other.list_rules()] == ["pytest"]
    policy.session_rules.clear()
    assert policy.needs_approval("execute", {"command": "ls -la"})
    assert not policy.needs_approval("execute", {"command": "pytest -q"})


def test_revoke_of_a_session_rule_leaves_the_file_alone(tmp_path: Path) -> None:
    policy = _policy(tmp_path, tmp_path / "ws")
    _grant(policy, "write_file", {"path": "a"}, "session")
    [rule] = policy.list_rules()
    policy.revoke_rule(rule.id)
    assert policy.list_rules() == []
    assert policy.needs_approval("write_file", {"path": "a"})
    assert not (tmp_path / "approvals.json").exists()


@pytest.mark.parametrize("bad", ["r_000000000000", "", "r_\x00", "x" * 10_000])
def test_revoke_of_an_unknown_id_is_a_clear_error_and_changes_nothing(
    tmp_path: Path, bad: str
) -> None:
    policy = _policy(tmp_path, tmp_path / "ws")
    _grant(policy, "execute", {"command": "pytest"}, "workspace")
    before = (tmp_path / "approvals.json").read_bytes()
    with pytest.raises(UnknownRule, match="No approval rule with id"):
        policy.revoke_rule(bad)
    assert (tmp_path / "approvals.json").read_bytes() == before


@pytest.mark.parametrize("bad", [42, None, ["r_1"], {"id": "r_1"}, True])
def test_a_rule_id_that_is_not_a_string_is_refused(tmp_path: Path, bad: object) -> None:
    with pytest.raises(RuleError, match="must be a string"):
        _policy(tmp_path, tmp_path / "ws").revoke_rule(bad)  # type: ignore[arg-type]


def test_a_damaged_file_is_reported_and_kept_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "approvals.json"
    path.write_text('{"version": 1, "workspaces": {', encoding="utf-8")
    policy = _policy(tmp_path, tmp_path / "ws")
    _grant(policy, "execute", {"command": "ls"}, "session")
    with pytest.raises(RulesFileDamaged, match="damaged"):
        policy.list_rules()
    with pytest.raises(RulesFileDamaged):
        policy.revoke_rule("r_000000000000")
    assert path.read_text(encoding="utf-8") == '{"version": 1, "workspaces": {'
    assert not path.with_suffix(".json.corrupt").exists()
    assert [r.command for r in policy.listed_session_rules()] == ["ls"]


def test_bad_entries_cost_only_themselves(tmp_path: Path) -> None:
    path, root = tmp_path / "approvals.json", str(tmp_path / "ws")
    good = {"tool": "execute", "command_prefix": "pytest", "created_at": "2026-01-01T00:00:00"}
    old = {"tool": "web_fetch"}  # before created_at existed: still a stable id
    bad: list[Any] = [42, "x", {"tool": 7}, {"tool": "execute", "command_prefix": ["a"]}, None]
    data = {"version": 1, "workspaces": {root: [*bad, good, old], "/elsewhere": "not a list"}}
    path.write_text(json.dumps(data), encoding="utf-8")
    policy = _policy(tmp_path, tmp_path / "ws")

    listed = policy.list_rules()
    assert [(r.tool, r.command) for r in listed] == [("execute", "pytest"), ("web_fetch", None)]
    assert [r.id for r in _policy(tmp_path, tmp_path / "ws").list_rules()] == [r.id for r in listed]
    policy.revoke_rule(listed[1].id)

    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["workspaces"][root] == [*bad, good]
    assert saved["workspaces"]["/elsewhere"] == "not a list"


def test_listing_every_workspace(tmp_path: Path) -> None:
    for name in ("b", "a"):
        _grant(_policy(tmp_path, tmp_path / name), "execute", {"command": "ls"}, "workspace")
    every = WorkspaceRuleStore(tmp_path / "approvals.json").listed(None)
    assert [r.workspace for r in every] == [str(tmp_path / "a"), str(tmp_path / "b")]


def test_the_last_rule_of_a_workspace_leaves_no_empty_entry(tmp_path: Path) -> None:
    policy = _policy(tmp_path, tmp_path / "ws")
    _grant(policy, "execute", {"command": "ls"}, "workspace")
    policy.revoke_rule(policy.list_rules()[0].id)
    saved = json.loads((tmp_path / "approvals.json").read_text(encoding="utf-8"))
    assert saved["workspaces"] == {}


def test_the_tamper_watch_accepts_invincats_own_revoke(tmp_path: Path) -> None:
    # A revoke made during a tool call (an editor request while a turn runs) is Invincat's
    # own change: the watch must not put the rule back.
    policy = _policy(tmp_path, tmp_path / "ws")
    _grant(policy, "execute", {"command": "ls"}, "workspace")
    watch = SettingsWatch(tmp_path)
    before = watch.snapshot()
    policy.revoke_rule(policy.list_rules()[0].id)
    assert watch.restore_if_tampered(before) is None
    assert policy.list_rules() == []


def test_a_deny_rule_is_listed_with_its_words(tmp_path: Path) -> None:
    rule = rule_listing.listed_deny_rule("execute", "rm", "2026-01-01", tmp_path)
    assert rule.effect == "deny" and rule.scope == "session"
    assert rule.covers == "Reject shell commands starting with `rm` for the rest of this session"
    assert rule.to_json()["effect"] == "deny"


def test_a_failed_write_changes_nothing_and_the_front_ends_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from invincat_server.acp.rules import rules_text
    from invincat_server.terminal.rules_cli import repl_rules

    policy = _policy(tmp_path, tmp_path / "ws")
    _grant(policy, "execute", {"command": "ls"}, "workspace")
    [rule] = policy.list_rules()
    before = (tmp_path / "approvals.json").read_bytes()

    def full_disk(*_args: object, **_kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rule_listing.rule_files, "save", full_disk)
    [line] = repl_rules(policy, f"revoke {rule.id}")
    assert "No space left on device; nothing was changed." in line
    assert "nothing was changed" in rules_text(policy, f"revoke {rule.id}")
    assert (tmp_path / "approvals.json").read_bytes() == before
    assert policy.list_rules() == [rule]


def test_the_repl_listing_keeps_session_rules_when_the_file_is_damaged(tmp_path: Path) -> None:
    from invincat_server.terminal.rules_cli import repl_rules

    policy = _policy(tmp_path, tmp_path / "ws")
    _grant(policy, "execute", {"command": "ls"}, "session")
    (tmp_path / "approvals.json").write_text("{", encoding="utf-8")
    session_line, problem = repl_rules(policy, "")
    assert "[session]  Allow shell commands starting with `ls`" in session_line
    assert "is damaged" in problem
    assert repl_rules(policy, "revoke") == ["Usage: /rules (list) or /rules revoke ID"]
