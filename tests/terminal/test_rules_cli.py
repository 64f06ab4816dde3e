"""`invincat rules list|revoke`: a rule granted through a real approval is listed with the
label it was granted with, revoking it makes the next chat ask again; bad input costs
nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import Result, run_invincat


def _run_pytest() -> dict[str, Any]:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": "pytest --version"}}]}


def _chat(env: dict[str, str], workspace: Path, answers: str) -> Result:
    result = run_invincat(
        ["chat", "run the tests", "--json", "--cwd", str(workspace)], env, input=answers
    )
    assert result.code == 0, result.stderr
    return result


def _rules(env: dict[str, str], workspace: Path, *extra: str) -> list[dict[str, Any]]:
    listed = run_invincat(["rules", "list", "--json", "--cwd", str(workspace), *extra], env)
    assert listed.code == 0, listed.stderr
    items: list[dict[str, Any]] = json.loads(listed.stdout)["items"]
    return items


def grant_workspace_rule(
    fake_openai: FakeOpenAIServer, env: dict[str, str], workspace: Path
) -> str:
    """A real approval answered 'always, this workspace' (`w`); returns its label."""
    fake_openai.add_steps([_run_pytest(), {"content": "ran"}])
    first = _chat(env, workspace, "w\n")
    [asked] = first.of_type("approval_requested")
    option = next(o for o in asked["always_options"] if o["scope"] == "workspace")
    label: str = option["label"]
    return label


def test_a_granted_rule_is_listed_revoked_and_the_next_chat_asks_again(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    label = grant_workspace_rule(fake_openai, invincat_env, workspace)
    fake_openai.add_steps([_run_pytest(), {"content": "ran again"}])
    assert _chat(invincat_env, workspace, "").of_type("approval_requested") == []

    [rule] = _rules(invincat_env, workspace)
    assert rule["covers"] == label
    assert (rule["scope"], rule["tool"], rule["command"]) == ("workspace", "execute", "pytest")
    assert rule["workspace"] == str(workspace.resolve())

    revoked = run_invincat(
        ["rules", "revoke", rule["id"], "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert revoked.code == 0, revoked.stderr
    assert json.loads(revoked.stdout)["revoked"]["id"] == rule["id"]
    assert _rules(invincat_env, workspace) == []

    fake_openai.add_steps([_run_pytest(), {"content": "not run"}])
    third = _chat(invincat_env, workspace, "n\n\n")
    [asked] = third.of_type("approval_requested")
    assert asked["tool_name"] == "execute"


def test_revoke_asks_first_and_no_keeps_the_rule(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    label = grant_workspace_rule(fake_openai, invincat_env, workspace)
    [rule] = _rules(invincat_env, workspace)
    args = ["rules", "revoke", rule["id"], "--cwd", str(workspace)]

    kept = run_invincat(args, invincat_env, input="n\n")
    assert kept.code == 0, kept.stderr
    assert label in kept.stdout and "Nothing revoked." in kept.stdout
    assert _rules(invincat_env, workspace) == [rule]

    gone = run_invincat(args, invincat_env, input="y\n")
    assert gone.code == 0, gone.stderr
    assert f"Revoked {rule['id']}" in gone.stdout
    assert _rules(invincat_env, workspace) == []


def test_list_shows_only_this_workspace_unless_all(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    grant_workspace_rule(fake_openai, invincat_env, workspace)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    assert _rules(invincat_env, elsewhere) == []
    assert len(_rules(invincat_env, elsewhere, "--all")) == 1
    # A rule of another workspace cannot be revoked from here.
    [rule] = _rules(invincat_env, workspace)
    other = run_invincat(
        ["rules", "revoke", rule["id"], "--yes", "--cwd", str(elsewhere)], invincat_env
    )
    assert other.code == 1 and "No approval rule with id" in other.stderr
    text = run_invincat(["rules", "list", "--cwd", str(workspace)], invincat_env)
    assert text.code == 0 and rule["id"] in text.stdout and rule["covers"] in text.stdout


def test_an_unknown_id_is_a_clear_error_and_changes_nothing(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    invincat_home: Path,
) -> None:
    grant_workspace_rule(fake_openai, invincat_env, workspace)
    before = (invincat_home / "approvals.json").read_bytes()
    for bad in ("r_000000000000", "r_\x01\x1b[2J", "x" * 100_000):
        result = run_invincat(
            ["rules", "revoke", bad, "--yes", "--cwd", str(workspace)], invincat_env
        )
        assert result.code == 1
        assert "No approval rule with id" in result.stderr and "Traceback" not in result.stderr
        assert "\x1b" not in result.stderr
    assert (invincat_home / "approvals.json").read_bytes() == before


def test_a_damaged_rules_file_is_reported_and_kept(
    invincat_env: dict[str, str], workspace: Path, invincat_home: Path
) -> None:
    path = invincat_home / "approvals.json"
    path.write_text('{"version": 1, "workspaces": {"/x": [', encoding="utf-8")
    for args in (["list"], ["revoke", "r_000000000000", "--yes"]):
        result = run_invincat(["rules", *args, "--cwd", str(workspace)], invincat_env)
        assert result.code == 1, result.stdout
        assert "is damaged" in result.stderr and "Traceback" not in result.stderr
    assert path.read_text(encoding="utf-8") == '{"version": 1, "workspaces": {"/x": ['


def test_usage_errors(invincat_env: dict[str, str], workspace: Path) -> None:
    assert run_invincat(["rules"], invincat_env).code == 2
    assert run_invincat(["rules", "revoke"], invincat_env).code == 2
    no_one_to_ask = run_invincat(
        ["rules", "revoke", "r_000000000000", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert no_one_to_ask.code == 2 and "--json needs --yes" in no_one_to_ask.stderr
    missing = run_invincat(["rules", "list", "--cwd", str(workspace / "nope")], invincat_env)
    assert missing.code == 1 and "not a directory" in missing.stderr


def test_a_symlinked_cwd_names_the_same_workspace(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    grant_workspace_rule(fake_openai, invincat_env, workspace)
    link = tmp_path / "link-to-project"
    link.symlink_to(workspace, target_is_directory=True)
    [rule] = _rules(invincat_env, link)
    assert rule["workspace"] == str(workspace.resolve())


def test_entries_that_are_not_rules_are_skipped_and_kept(
    invincat_env: dict[str, str], workspace: Path, invincat_home: Path
) -> None:
    root = str(workspace.resolve())
    good = {"tool": "execute", "command_prefix": "make", "created_at": "2026-01-01T00:00:00"}
    bad: list[Any] = [7, {"tool": None}, {"tool": "execute", "command_prefix": {"x": 1}}]
    huge = {"tool": "x" * 200_000, "created_at": "2026-01-01"}
    evil = {"tool": "web\x1b[2Jfetch\nnext", "created_at": "2026-01-01"}
    path = invincat_home / "approvals.json"
    data = {"version": 1, "workspaces": {root: [*bad, good, huge, evil]}}
    path.write_text(json.dumps(data), encoding="utf-8")

    items = _rules(invincat_env, workspace)
    assert [i["tool"] for i in items] == ["execute", "x" * 200_000, "web\x1b[2Jfetch\nnext"]
    text = run_invincat(["rules", "list", "--cwd", str(workspace)], invincat_env)
    assert text.code == 0 and "\x1b" not in text.stdout
    assert len(text.stdout.splitlines()) == 4  # header + one line per rule
    done = run_invincat(
        ["rules", "revoke", items[0]["id"], "--yes", "--cwd", str(workspace)], invincat_env
    )
    assert done.code == 0, done.stderr
    saved = json.loads(path.read_text(encoding="utf-8"))["workspaces"][root]
    assert saved == [*bad, huge, evil]
