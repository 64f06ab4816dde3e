"""Issue 13 §5: credentials pasted in a prompt and read from a file leave no trace in
anything Invincat writes to disk or sends anywhere but the main model.

A real session against the scripted fake server: the user pastes over 40 credentials of
30-odd providers and the agent reads a file holding fresh ones; the memory model then
proposes entries quoting them (as a careless model would). None may reach the memory
model's requests, the memory store, its journal, the offload file, the summary that
replaces the offloaded turns, any other file Invincat wrote, or the thread's title.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn

from .credentials import Credential, credentials

MEMORY_MODEL = "memory-model"
ON = {"INVINCAT_MEMORY_EXTRACTION": "on", "INVINCAT_MEMORY_MODEL": MEMORY_MODEL}


def main(**step: Any) -> dict[str, Any]:
    return {"match": {"model": "fake-model"}, **step}


def proposal(leaked: list[Credential]) -> dict[str, Any]:
    ops = [
        {
            "op": "create",
            "scope": "project",
            "section": "Deploy",
            "content": f"Deploys of service {n} use the {c.provider} {c.text}",
            "confidence": "high",
            "score": 85,
            "score_reason": f"the user pasted {c.text}",
        }
        for n, c in enumerate(leaked)
    ]
    call = {"name": "submit_memory_operations", "arguments": {"operations": ops}}
    return {"match": {"model": MEMORY_MODEL}, "tool_calls": [call]}


def leaks(text: str, creds: list[Credential]) -> list[str]:
    return [c.provider for c in creds if c.secret in text]


def files_written(*roots: Path) -> dict[str, str]:
    """Every file under the given roots except the SQLite thread store, which holds the
    main model's conversation itself (see docs/security.md)."""
    return {
        str(p): p.read_text(encoding="utf-8", errors="replace")
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and "threads.sqlite" not in p.name
    }


async def test_no_credential_reaches_memory_requests_store_journal_offload_or_summary(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    workspace: Path,
    invincat_home: Path,
) -> None:
    pasted, in_file = credentials(), credentials()
    everything = pasted + in_file
    assert len({c.provider for c in everything}) >= 25
    (workspace / "deploy.env").write_text("\n\n".join(c.text for c in in_file) + "\n")
    prompt = "Remember the credentials for our deploys:\n" + "\n".join(
        f"- {c.provider}: {c.text}" for c in pasted
    )
    # The memory model quotes 20 of them back (20 ops: the batch limit).
    quoted = pasted[:10] + in_file[:10]
    fake_openai.add_steps(
        [
            main(tool_calls=[{"name": "read_file", "arguments": {"path": "deploy.env"}}]),
            main(content="Noted; deploy.env holds the same kinds of keys."),
            proposal(quoted),
            main(content="Second answer."),
            main(content="Third answer."),
        ]
    )
    session = await make_session(**ON)
    thread_id, _ = await run_turn(session, prompt, follow=True)
    await run_turn(session, "thanks, what else do you need?", thread_id)

    memory_requests = [r for r in fake_openai.chat_requests() if r["model"] == MEMORY_MODEL]
    assert memory_requests, "the memory model was never asked"
    sent = json.dumps(memory_requests)
    # It did get the conversation and the file, with the secrets replaced.
    assert "deploy.env" in sent and "[REDACTED:" in sent
    assert leaks(sent, everything) == []

    report = await session.offload(thread_id)
    assert report["offloadedMessages"] >= 3
    offload_text = Path(report["file"]).read_text()
    assert "Remember the credentials" in offload_text and "[REDACTED:" in offload_text
    assert leaks(offload_text, everything) == []

    # The model now sees the summary that replaced the first turn: it quotes no secret.
    await run_turn(session, "one more question", thread_id)
    after = [r for r in fake_openai.chat_requests() if r["model"] != MEMORY_MODEL][-1]
    assert "Earlier, the user asked" in after["messages"][1]["content"]
    assert leaks(json.dumps(after), everything) == []

    service = session.memory
    store = service.store_paths()["project"]
    journal = service.files["project"].journal  # type: ignore[index]
    assert journal.exists()
    written = files_written(workspace / ".invincat", invincat_home)
    assert str(journal) in written
    for path, text in written.items():
        assert leaks(text, everything) == [], path
    if store.exists():
        assert leaks(store.read_text(), everything) == []

    [thread] = [t for t in await session.threads() if t.thread_id == thread_id]
    assert leaks(thread.title, everything) == []


async def test_the_thread_title_keeps_no_secret(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory
) -> None:
    short = [c for c in credentials() if len(c.text) <= 50 and c.text == c.secret]
    assert len(short) >= 10
    fake_openai.add_steps([main(content="ok")] * len(short))
    session = await make_session()
    for cred in short:
        thread_id, _ = await run_turn(session, f"deploy with {cred.text} please")
        [thread] = [t for t in await session.threads() if t.thread_id == thread_id]
        assert cred.secret not in thread.title, (cred.provider, thread.title)
        assert thread.title.startswith("deploy with [REDACTED:")


async def test_a_refused_proposal_quoting_a_secret_is_not_stored_logged_or_sent_back(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    invincat_home: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    creds = [c for c in credentials() if c.text == c.secret and "\n" not in c.text][:8]
    broken = "{'operations': [" + ", ".join(c.text for c in creds)  # not JSON
    fake_openai.add_steps(
        [
            main(content="Noted."),
            *[
                {
                    "match": {"model": MEMORY_MODEL},
                    "tool_calls": [{"name": "submit_memory_operations", "arguments_raw": broken}],
                }
            ]
            * 2,  # the answer, and the one asked for again in the same run
            main(content="Noted again."),
            {"match": {"model": MEMORY_MODEL}, "content": '{"operations": []}'},
        ]
    )
    session = await make_session(**ON)
    thread_id, _ = await run_turn(session, "remember: we deploy on Fridays", follow=True)
    await run_turn(session, "remember: and never on holidays", thread_id, follow=True)
    requests = [r for r in fake_openai.chat_requests() if r["model"] == MEMORY_MODEL]
    # The last stored nothing for an explicit request: asked about once more (4 in all).
    assert len(requests) == 4
    assert "previous proposal was not applied" in json.dumps(requests[1])
    assert "previous proposal was not applied" in json.dumps(requests[2])
    # The refusal quotes the start of the raw arguments: no secret may survive in it,
    # not even its first characters.
    sent = json.dumps(requests[1:])
    assert [c.provider for c in creds if c.secret[:16] in sent] == []
    db = (invincat_home / "threads.sqlite").read_bytes()
    assert [c.provider for c in creds if c.secret[:16].encode() in db] == []
    # The warning logged (it ends up in the editor's LSP log file) is redacted too.
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "memory" in logged and "[REDACTED:" in logged
    assert [c.provider for c in creds if c.secret[:16] in logged] == []


def test_through_the_invincat_process_no_credential_reaches_the_memory_model_or_disk(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    invincat_home: Path,
) -> None:
    from tests.terminal.cli_process import run_invincat

    pasted, in_file = credentials(), credentials()
    everything = pasted + in_file
    (workspace / "deploy.env").write_text("\n\n".join(c.text for c in in_file) + "\n")
    prompt = "Remember the credentials for our deploys:\n" + "\n".join(
        f"- {c.provider}: {c.text}" for c in pasted
    )
    fake_openai.add_steps(
        [
            main(tool_calls=[{"name": "read_file", "arguments": {"path": "deploy.env"}}]),
            main(content="Noted."),
            proposal(pasted[:10] + in_file[:10]),
        ]
    )
    env = {**invincat_env, **ON}
    result = run_invincat(
        ["chat", prompt, "--yes", "--json", "--cwd", str(workspace)], env, timeout=120
    )
    assert result.code == 0, result.stderr
    memory_requests = [r for r in fake_openai.chat_requests() if r["model"] == MEMORY_MODEL]
    assert memory_requests, result.stderr
    sent = json.dumps(memory_requests)
    assert "deploy.env" in sent and "[REDACTED:" in sent
    assert leaks(sent, everything) == []
    written = files_written(workspace / ".invincat", invincat_home)
    assert any(p.endswith(".jsonl") or "journal" in p for p in written), sorted(written)
    for path, text in written.items():
        assert leaks(text, everything) == [], path
    listed = run_invincat(["threads", "list"], env)
    # The title is cut at 80 characters after redaction: the placeholder that would
    # cross the cut is left out whole (never `[REDACTED:stri`).
    assert listed.code == 0 and "Remember the credentials" in listed.stdout, listed.stderr
    assert "[REDACTED:stri" not in listed.stdout
    assert leaks(listed.stdout, everything) == []
