"""`/rules` in an ACP session: the "reject always" rule of this session and the workspace's
"allow always" rule are listed with their ids and the words the options offered; revoking
each makes the next such call ask again."""

from __future__ import annotations

import json
import re
from pathlib import Path

from acp import text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.conftest import Agent

RULE_LINE = re.compile(r"- `(r_[0-9a-f]{12})` \((session|workspace), (allow|deny)\): (.*)")


def _run(command: str) -> dict:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command}}]}


async def _say(agent: Agent, text: str) -> str:
    """Send a prompt; the agent's text of that answer only."""
    before = agent.client.text()
    answer = await agent.conn.prompt(session_id=agent.session_id, prompt=[text_block(text)])
    assert answer.stop_reason == "end_turn"
    return agent.client.text()[len(before) :]


async def test_rules_lists_allow_and_deny_rules_and_revoke_asks_again(
    fake_openai: FakeOpenAIServer, agent: Agent, workspace: Path, invincat_home: Path
) -> None:
    await agent.client.wait_for(lambda: agent.client.of_kind("available_commands_update"))
    [commands] = agent.client.of_kind("available_commands_update")
    assert "rules" in {c.name for c in commands.available_commands}

    fake_openai.add_steps([_run("pytest -q"), {"content": "ran"}])
    await agent.client.answers.put("allow_always")
    await _say(agent, "test it")
    allow_label = agent.client.permission_requests[-1]["options"][1].name
    fake_openai.add_steps([_run("rm -rf build"), {"content": "not run"}])
    await agent.client.answers.put("reject_always")
    await _say(agent, "clean it")
    deny_label = agent.client.permission_requests[-1]["options"][-1].name
    assert len(agent.client.permission_requests) == 2

    listing = await _say(agent, "/rules")
    rules = {m.group(3): m for m in RULE_LINE.finditer(listing)}
    assert set(rules) == {"allow", "deny"}, listing
    assert rules["allow"].group(4) == allow_label
    assert rules["allow"].group(2) == "workspace"
    # The option said "Reject, and reject X for the rest of this session".
    assert rules["deny"].group(4).removeprefix("Reject ") in deny_label
    assert "Usage" in await _say(agent, "/rules nonsense")
    assert "No approval rule with id" in await _say(agent, "/rules revoke r_000000000000")

    for kind in ("deny", "allow"):
        answer = await _say(agent, f"/rules revoke {rules[kind].group(1)}")
        assert f"Revoked `{rules[kind].group(1)}`" in answer
    assert "No approval rules" in await _say(agent, "/rules")
    saved = json.loads((invincat_home / "approvals.json").read_text())["workspaces"]
    assert saved == {}

    # Both calls ask again.
    fake_openai.add_steps(
        [_run("pytest -q"), {"content": "asked"}, _run("rm -rf build"), {"content": "asked"}]
    )
    for _ in range(2):
        await agent.client.answers.put("reject_once")
    await _say(agent, "test it again")
    await _say(agent, "clean it again")
    assert len(agent.client.permission_requests) == 4


async def test_a_damaged_rules_file_is_said_and_kept(agent: Agent, invincat_home: Path) -> None:
    path = invincat_home / "approvals.json"
    path.write_text("[broken", encoding="utf-8")
    assert "is damaged" in await _say(agent, "/rules")
    assert "is damaged" in await _say(agent, "/rules revoke r_000000000000")
    assert path.read_text(encoding="utf-8") == "[broken"
