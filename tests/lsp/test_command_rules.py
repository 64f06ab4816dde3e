"""'Always allow' over the language server covers only what the user saw (issue #23).

The editor's "approve always" for `rm -f nothing.txt` (a client that still sends it) must
not let `rm -rf ../victim` run unasked, and the request for it carries no always options
(so VS Code and Neovim draw no "always" button) with the reason why.
"""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.client import InvincatClient, wait_until


def _run(command: str) -> dict:
    return {"tool_calls": [{"name": "execute", "arguments": {"command": command}}]}


async def test_approve_always_on_rm_f_does_not_cover_rm_rf_outside(
    lsp: InvincatClient, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    victim = workspace.parent / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me\n")
    fake_openai.add_steps(
        [_run("rm -f nothing.txt"), _run("rm -rf ../victim"), {"content": "Stopped."}]
    )
    ref = await lsp.chat("clean up")

    def of_turn(event: dict) -> bool:
        return event["turnId"] == ref["turnId"]

    first = await lsp.wait_event("approval_requested", where=of_turn)
    await lsp.resolve(first["event"]["approval_id"], "approve_always", scope="session")

    def next_step() -> dict | None:
        """The second approval request, or the end of the turn if it ran unasked."""
        for item in lsp.events:
            event = item["event"]
            if not of_turn(item) or event.get("approval_id") == first["event"]["approval_id"]:
                continue
            if event["type"] in ("approval_requested", "turn_end"):
                return item
        return None

    second = (await wait_until(next_step, what="the second approval or the turn's end"))["event"]
    assert second["type"] == "approval_requested", "rm -rf ../victim ran without asking"
    assert second["args"] == {"command": "rm -rf ../victim"}
    await lsp.resolve(second["approval_id"], "reject")
    await lsp.turn_end(ref["turnId"])
    assert (victim / "precious.txt").read_text() == "keep me\n"
    # Neither request offered a rule (no "always" button), and each says why.
    assert first["event"]["always_options"] == second["always_options"] == []
    assert "`rm`: it deletes files" in first["event"]["always_unavailable"]
