"""What an approval says a change to a project permission file grants (pure logic), and
which paths count as such files or as Invincat's home."""

from __future__ import annotations

import json
import os
from pathlib import Path

from invincat_server.runtime.memory.protection import PathGuard
from invincat_server.runtime.policy.settings_grants import describe_grants, project_settings_name


def test_mcp_grants_name_new_and_changed_servers_only() -> None:
    old = json.dumps({"mcpServers": {"kept": {"command": "a"}}})
    new = json.dumps(
        {
            "mcpServers": {
                "kept": {"command": "a"},
                "web": {"url": "https://mcp.example.com/x", "autoApprove": ["search"]},
                "off": {"command": "rm", "disabled": True},
            }
        }
    )
    text = describe_grants(".mcp.json", old, new)
    assert "connects to MCP server `web` at https://mcp.example.com/x" in text
    assert "auto-approves `web` tools: search" in text
    assert "kept" not in text and "`off`" not in text
    assert "still start only once the project is trusted" in text


def test_unreadable_or_empty_changes_are_said_plainly() -> None:
    assert "cannot be read as JSON" in describe_grants(".invincat/mcp.json", None, "{nope")
    assert "adds nothing new" in describe_grants(".mcp.json", "{}", '{"mcpServers": {}}')
    sub = describe_grants(
        ".invincat/subagents.json", None, json.dumps({"remote": {"r": {"url": "https://h"}}})
    )
    assert "sends tasks to remote subagent `r` at https://h" in sub
    toml = describe_grants(".invincat/config.toml", "[memory]\nextraction=true\n", "x = 1\n")
    assert "changes settings: memory, x" in toml


def test_project_settings_paths_resolve_through_links(tmp_path: Path) -> None:
    (tmp_path / ".invincat").mkdir()
    (tmp_path / ".mcp.json").write_text("{}")
    os.symlink(tmp_path / ".mcp.json", tmp_path / "innocent.json")
    assert project_settings_name(tmp_path, ".mcp.json") == ".mcp.json"
    assert project_settings_name(tmp_path, "innocent.json") == ".mcp.json"
    assert project_settings_name(tmp_path, "./.invincat/../.invincat/config.toml") == (
        ".invincat/config.toml"
    )
    assert project_settings_name(tmp_path, "src/.mcp.json") is None
    assert project_settings_name(tmp_path, None) is None


def test_home_inside_the_project_is_guarded_however_it_is_spelled(tmp_path: Path) -> None:
    home = tmp_path / ".invincat"
    (home / "skills" / "s").mkdir(parents=True)
    (home / "approvals.json").write_text("{}")
    os.link(home / "approvals.json", tmp_path / "hard.json")
    os.symlink(home, tmp_path / "alias")
    guard = PathGuard(home, tmp_path)
    for path in ["hard.json", "alias/approvals.json", ".INVINCAT/approvals.json", ".invincat/x"]:
        assert guard.protection(path) == "home", path
    assert guard.protection(".invincat/skills/s/SKILL.md", write=False) is None
    assert guard.protection(".invincat/offload/t.md", write=False) is None
    assert guard.protection("src/app.py") is None
    for command in ["cat alias/approvals.json", "cp x .invincat/skills/s/SKILL.md", "ls .invincat"]:
        assert guard.command_touches_memory(command), command
    assert guard.command_touches_memory("pytest -q") is None


def test_settings_watch_restores_a_file_replaced_by_a_folder_even_without_a_copy(
    tmp_path: Path,
) -> None:
    from invincat_server.runtime.policy.settings_watch import SettingsWatch

    home = tmp_path / "ih"
    home.mkdir()
    (home / "mcp.json").write_text('{"mcpServers": {}}')
    watch = SettingsWatch(home)
    before = watch.snapshot()
    (home / "mcp.json").unlink()
    (home / "mcp.json").mkdir()
    (home / "mcp.json" / "x").write_text("planted")
    report = watch.restore_if_tampered(before)
    assert report is not None and "mcp.json" in report and "undone" in report
    assert (home / "mcp.json").read_text() == '{"mcpServers": {}}'

    before = watch.snapshot()
    (home / "config.toml").write_text("model = 'evil'\n")
    (home / "tampered").write_text("a file where the backup folder goes")
    report = watch.restore_if_tampered(before)
    assert report is not None and "undone" in report and "no copy of config.toml" in report
    assert not (home / "config.toml").exists()
    assert watch.restore_if_tampered(watch.snapshot()) is None


def test_the_policy_asks_for_settings_files_despite_rules_but_not_under_yes(
    tmp_path: Path,
) -> None:
    from invincat_server.runtime.approvals import ApprovalPolicy, Rule, WorkspaceRuleStore

    store = WorkspaceRuleStore(tmp_path / "approvals.json")
    store.add(tmp_path, Rule(tool="file_writes"))
    policy = ApprovalPolicy(tmp_path, store, auto_approve=False)
    assert not policy.needs_approval("write_file", {"path": "src/a.py"})
    for path in [".mcp.json", ".invincat/mcp.json", ".invincat/config.toml"]:
        assert policy.needs_approval("write_file", {"path": path}), path
        assert policy.needs_approval("edit_file", {"path": path}), path
    yes = ApprovalPolicy(tmp_path, store, auto_approve=True)
    assert not yes.needs_approval("write_file", {"path": ".mcp.json"})


def test_a_sandbox_change_is_spelled_out() -> None:
    text = describe_grants(
        ".invincat/config.toml",
        '[sandbox]\nmode = "read-only"\n',
        '[sandbox]\nmode = "off"\nnetwork = true\n',
    )
    assert "changes the shell sandbox (" in text
    assert "mode 'read-only' → 'off'" in text and "network '(unset)' → True" in text
    assert "a wider one applies only once the project is trusted" in text
