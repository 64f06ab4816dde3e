"""`:Invincat rules`: the rules buffer lists a rule granted at a real approval with what
it covers, and `d`/`x` revoke it after asking (the file loses exactly that rule)."""

from __future__ import annotations

import json
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import RunNvim
from tests.terminal.cli_process import run_invincat
from tests.terminal.test_rules_cli import grant_workspace_rule


def test_the_rules_buffer_lists_and_revokes_after_asking(
    nvim: RunNvim,
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    invincat_home: Path,
) -> None:
    label = grant_workspace_rule(fake_openai, invincat_env, workspace)
    listed = run_invincat(["rules", "list", "--json", "--cwd", str(workspace)], invincat_env)
    [rule] = json.loads(listed.stdout)["items"]

    result = nvim("rules", id=rule["id"])

    assert result["filetype"] == "invincat-rules"
    assert result["listed_line"] == f"{rule['id']}  workspace  {label}"
    assert any("d revoke" in line for line in result["listed"])
    # `d` on the header asked nothing; "Keep" kept the rule; "Revoke" took it back.
    assert [p["items"] for p in result["prompts"]] == [["Revoke", "Keep"], ["Revoke", "Keep"]]
    assert result["kept"]
    assert any("(no rules" in line for line in result["after"])
    assert any(f"revoked {rule['id']}" in n["message"] for n in result["notifications"])
    saved = json.loads((invincat_home / "approvals.json").read_text(encoding="utf-8"))
    assert saved["workspaces"] == {}
