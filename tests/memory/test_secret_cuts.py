"""Issue 23 §5: text is redacted before it is cut, and every channel that persists or
leaves the process is redacted, checked through the real processes with the catalogue of
100 credential formats generated fresh each run (tests/memory/credentials.py).

A secret cut before redaction leaves half a token: no format rule recognises it, and it
is still half the secret. So besides the whole secrets, no 12-character piece of any of
them may appear in what the memory model is sent, the stores and journals, the offload
file, the summary that replaces offloaded turns, or a thread title — with secrets placed
across every cut: the memory slice's 200 (tool-call arguments) and 300 (tool results),
its evidence labels' 120, the fallback summary's 300 and the title's 80.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, text_block

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.acp.client import ScriptedClient, acp_agent, capabilities
from tests.terminal.cli_process import run_invincat

from .credentials import Credential, credentials, filler, leaked, straddlers

MEMORY_MODEL = "memory-model"
ON = {"INVINCAT_MEMORY_EXTRACTION": "on", "INVINCAT_MEMORY_MODEL": MEMORY_MODEL}
# Where each cut falls, and how much of a secret lies before it (more than 12 characters,
# so a cut-then-redact leaves a piece the leak check finds).
BEFORE_CUT = 16
READ_PREFIX = len(f"{1:>6}\t")  # read_file numbers its lines
CALL_PREFIX = len('{"pattern": "')


def main(**step: Any) -> dict[str, Any]:
    return {"match": {"model": "fake-model"}, **step}


def proposal(quoted: list[Credential]) -> dict[str, Any]:
    ops = [
        {
            "op": "create",
            "scope": "project",
            "section": "Deploy",
            "content": f"Service {n} deploys with the {c.provider} {c.text}",
            "confidence": "high",
            "score": 85,
            "score_reason": f"the user pasted {c.text}",
        }
        for n, c in enumerate(quoted)
    ]
    call = {"name": "submit_memory_operations", "arguments": {"operations": ops}}
    return {"match": {"model": MEMORY_MODEL}, "tool_calls": [call]}


def files_written(*roots: Path) -> dict[str, str]:
    """Every file under `roots` but the thread store, which keeps the main model's
    conversation verbatim by design, and the rewind checkpoints' blobs, copies of the
    project's own files (docs/security.md, "Rewind checkpoints")."""
    return {
        str(p): p.read_text(encoding="utf-8", errors="replace")
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and "threads.sqlite" not in p.name
        and not (p.parent.parent.name == "objects" and "checkpoints" in p.parts)
    }


def listed_titles(env: dict[str, str]) -> str:
    result = run_invincat(["threads", "list", "--json"], env)
    assert result.code == 0, result.stderr
    return result.stdout


def test_a_chat_keeps_no_secret_nor_piece_of_one_in_memory_requests_stores_or_titles(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    invincat_home: Path,
) -> None:
    pasted, in_file, replied = credentials(), credentials(), credentials()
    at_call, at_result = straddlers(credentials(), 3), straddlers(credentials(), 3)
    at_label = straddlers(credentials(), 1)
    everything = pasted + in_file + replied + at_call + at_result + at_label
    assert len({c.provider for c in everything}) >= 50

    (workspace / "deploy.env").write_text("\n\n".join(c.text for c in in_file) + "\n")
    # A tool result cut at 300 for the memory slice: each file's secret crosses it.
    for n, cred in enumerate(at_result):
        pad = filler(300 - BEFORE_CUT - READ_PREFIX)
        (workspace / f"cut{n}.txt").write_text(f"{pad}{cred.text} and more text\n")
    reads = [
        {"name": "read_file", "arguments": {"path": path}}
        for path in ["deploy.env", *(f"cut{n}.txt" for n in range(len(at_result)))]
    ]
    # Tool-call arguments cut at 200: each grep pattern's secret crosses it.
    greps = [
        {"name": "grep", "arguments": {"pattern": filler(200 - BEFORE_CUT - CALL_PREFIX) + c.text}}
        for c in at_call
    ]
    # An evidence label (the command) cut at 120; `pytest` makes it evidence.
    [label] = at_label
    command = "echo pytest " + filler(120 - BEFORE_CUT - len("echo pytest ")) + label.text
    run = {"name": "execute", "arguments": {"command": command}}
    prompt = "Remember the credentials for our deploys:\n" + "\n".join(
        f"- {c.provider}: {c.text}" for c in pasted
    )
    fake_openai.add_steps(
        [
            main(tool_calls=reads),
            main(tool_calls=[*greps, run]),
            main(content="Noted, I will use " + "\n".join(c.text for c in replied)),
            proposal(pasted[:7] + in_file[:7] + replied[:6]),
        ]
    )
    env = {**invincat_env, **ON}
    result = run_invincat(
        ["chat", prompt, "--yes", "--json", "--cwd", str(workspace)], env, timeout=180
    )
    assert result.code == 0, result.stderr

    memory_requests = [r for r in fake_openai.chat_requests() if r["model"] == MEMORY_MODEL]
    assert memory_requests, result.stderr
    sent = "\n".join(m["content"] for r in memory_requests for m in r["messages"])
    # It was sent the conversation, the calls and the results, with the secrets replaced.
    assert "Assistant called grep(" in sent and "cut0.txt" in sent and "[REDACTED:" in sent
    assert "Tool read_file returned:" in sent and "echo pytest" in sent
    assert leaked(sent, everything) == []

    written = files_written(workspace / ".invincat", invincat_home)
    assert any("journal" in p or p.endswith(".jsonl") for p in written), sorted(written)
    for path, text in written.items():
        assert leaked(text, everything) == [], path
    titles = listed_titles(env)
    assert "Remember the credentials" in titles
    assert leaked(titles, everything) == []


async def test_acp_titles_offload_and_its_summary_keep_no_secret_nor_piece_of_one(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
) -> None:
    catalogue, replied = credentials(), credentials()
    at_title, at_summary, at_title_cut = straddlers(credentials(), 3)
    everything = catalogue + replied + [at_title, at_summary, at_title_cut]
    # The title is the prompt's start; the fallback summary quotes 300 characters of
    # each prompt: a secret crosses that cut.
    opening = f"deploy with {at_title.text} please. "
    first = (
        opening
        + filler(300 - BEFORE_CUT - len(opening))
        + at_summary.text
        + "\n"
        + "\n".join(f"- {c.provider}: {c.text}" for c in catalogue)
    )
    fake_openai.add_steps(
        [
            main(content="Noted: " + " ".join(c.text for c in replied)),
            main(content="You are welcome."),
            main(content="Third answer."),
            main(content="Other session."),
        ]
    )
    client = ScriptedClient()
    async with acp_agent(invincat_env, workspace, client) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities())
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block(first)])
        await conn.prompt(session_id=sid, prompt=[text_block("thanks")])
        await conn.prompt(session_id=sid, prompt=[text_block("/offload")])
        assert "Offloaded" in client.text()
        await conn.prompt(session_id=sid, prompt=[text_block("one more question")])
        # A second session whose title cut (80 characters) falls inside a secret.
        other = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        title_prompt = filler(80 - BEFORE_CUT) + at_title_cut.text + " is the key"
        await conn.prompt(session_id=other, prompt=[text_block(title_prompt)])

    offload = (workspace / ".invincat" / "offload" / f"{sid}.md").read_text()
    assert "deploy with [REDACTED:" in offload and "Noted:" in offload
    assert leaked(offload, everything) == []
    # What replaced the offloaded turns in the model's context: the fallback summary.
    after = next(r for r in fake_openai.chat_requests() if "one more question" in json.dumps(r))
    summary = after["messages"][1]["content"]
    assert "Earlier, the user asked" in summary and "[REDACTED:" in summary
    assert leaked(json.dumps(after), everything) == []
    titles = listed_titles(invincat_env)
    assert "deploy with [REDACTED:" in titles and "word word" in titles
    assert leaked(titles, everything) == []


def test_malformed_memory_model_arguments_quoted_in_errors_keep_no_piece_of_a_secret(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    invincat_home: Path,
) -> None:
    # The error quotes the start (120 characters) of the raw arguments; it is logged,
    # stored as the memory agent's failure and sent back to the memory model next run.
    creds = straddlers(credentials(), 3)
    start = '{"operations": ['
    raw = start + filler(120 - BEFORE_CUT - len(start)) + creds[0].text + " " + creds[1].text
    fake_openai.add_steps(
        [
            main(content="Noted."),
            {
                "match": {"model": MEMORY_MODEL},
                "tool_calls": [{"name": "submit_memory_operations", "arguments_raw": raw}],
            },
        ]
    )
    env = {**invincat_env, **ON}
    result = run_invincat(
        ["chat", "remember: deploys go out on Fridays", "--json", "--cwd", str(workspace)],
        env,
        timeout=180,
    )
    assert result.code == 0, result.stderr
    assert [r for r in fake_openai.chat_requests() if r["model"] == MEMORY_MODEL]
    db = (invincat_home / "threads.sqlite").read_bytes().decode("utf-8", "replace")
    assert "malformed" in db or "memory" in result.stderr
    assert leaked(db, creds) == []
    assert leaked(result.stderr, creds) == []
    assert leaked(result.stdout, creds) == []
