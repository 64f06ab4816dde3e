"""Issue 23 item 3: a repository cannot redirect where Invincat keeps project state.

A cloned repository decides what lies in `.invincat/`. If it ships `.invincat` as a link to
a folder elsewhere, the memory agent must not write its store, journal, lock or
`.gitignore` there; if it ships the store as a link to another project's store, that
project's entries must never reach this project's model, and the link stays a link.
Through the real `invincat` process and the scripted fake model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn
from tests.terminal.cli_process import run_invincat

from .helpers import distinct_fact

MEMORY_MODEL = "memory-model"


def _env(invincat_env: dict[str, str]) -> dict[str, str]:
    return {
        **invincat_env,
        "INVINCAT_MEMORY_EXTRACTION": "on",
        "INVINCAT_MEMORY_MODEL": MEMORY_MODEL,
    }


def _script(fact: str) -> list[dict[str, Any]]:
    op = {
        "op": "create",
        "scope": "project",
        "section": "Testing",
        "content": fact,
        "confidence": "high",
        "score": 85,
        "score_reason": "the user asked to remember it",
    }
    call = {"name": "submit_memory_operations", "arguments": {"operations": [op]}}
    return [
        {"match": {"model": "fake-model"}, "content": "Noted."},
        {"match": {"model": MEMORY_MODEL}, "tool_calls": [call]},
    ]


def _chat(env: dict[str, str], workspace: Path, prompt: str) -> Any:
    return run_invincat(["chat", prompt, "--json", "--cwd", str(workspace)], env)


def _listed(env: dict[str, str], workspace: Path) -> Any:
    return run_invincat(["memory", "list", "--json", "--cwd", str(workspace)], env)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_symlinked_data_dir_gets_no_memory_and_the_user_is_told(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".invincat").symlink_to(outside)
    env = _env(invincat_env)
    fake_openai.add_steps(_script(distinct_fact("remembered")))

    result = _chat(env, workspace, "remember that we run the tests with pytest -q")

    assert result.code == 0, result.stderr  # chat still works
    assert [e["text"] for e in result.of_type("message_delta")] or result.of_type("turn_end")
    assert list(outside.iterdir()) == []  # no store, journal, lock or .gitignore out there
    assert (workspace / ".invincat").is_symlink()
    # Logged lines are redacted (the temp dir reads `<tmp>`): match the path's tail.
    told = result.stderr + json.dumps(result.of_type("error"))
    assert "project/.invincat is a symbolic link" in told, told

    listed = _listed(env, workspace)
    assert listed.code == 2, (listed.stdout, listed.stderr)
    assert f"{workspace / '.invincat'} is a symbolic link" in listed.stderr
    assert "rm " in listed.stderr  # and what to do
    assert list(outside.iterdir()) == []


def test_a_store_linked_to_another_project_never_reaches_the_model(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> None:
    env = _env(invincat_env)
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    secret_fact = distinct_fact("other-project-only")
    added = run_invincat(
        ["memory", "apply", "--scope", "project", "-", "--cwd", str(other)],
        env,
        input=json.dumps(
            {
                "operations": [
                    {
                        "op": "create",
                        "scope": "project",
                        "section": "Private",
                        "content": secret_fact,
                        "confidence": "high",
                        "score": 90,
                        "score_reason": "test",
                    }
                ]
            }
        ),
    )
    assert added.code == 0, added.stderr
    other_store = other / ".invincat" / "memory_project.json"
    before = other_store.read_bytes()
    assert secret_fact.encode() in before
    link = workspace / ".invincat" / "memory_project.json"
    link.parent.mkdir()
    link.symlink_to("../../other/.invincat/memory_project.json")
    assert link.read_bytes() == before  # the link does reach the other store

    fake_openai.add_steps(_script(distinct_fact("ours")))
    result = _chat(env, workspace, "remember that we deploy on Fridays")

    assert result.code == 0, result.stderr
    sent = json.dumps(fake_openai.chat_requests())
    assert secret_fact not in sent  # neither the main model nor the memory model saw it
    [told] = result.of_type("error")  # once, and the turn completed
    assert f"{link} is a symbolic link" in told["message"]
    assert "without project memory" in told["message"]
    assert link.is_symlink()
    assert other_store.read_bytes() == before
    listed = _listed(env, workspace)
    assert listed.code == 2 and f"{link} is a symbolic link" in listed.stderr
    assert secret_fact not in listed.stdout + listed.stderr


async def test_tool_calls_work_and_offload_is_refused_when_the_data_dir_is_a_link(
    fake_openai: FakeOpenAIServer,
    make_session: SessionFactory,
    workspace: Path,
    tmp_path: Path,
) -> None:
    """The tamper watch around a tool call and `/offload` meet the same refusal: the tool
    call runs, the transcript is not written to the linked folder, and the error says why."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".invincat").symlink_to(outside)
    (workspace / "notes.txt").write_text("".join(f"note {i}\n" for i in range(50)))
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"content": "Read the notes."},
            {"content": "Second."},
            {"content": "Third."},
        ]
    )
    session = await make_session()
    thread_id, events = await run_turn(session, "read notes.txt")
    [result] = [e for e in events if e.type == "tool_result"]
    assert result.status == "success" and "note 49" in result.content
    await run_turn(session, "second question", thread_id)
    await run_turn(session, "third question", thread_id)

    with pytest.raises(OSError, match=r"project/\.invincat is a symbolic link"):
        await session.offload(thread_id)
    assert list(outside.iterdir()) == []
    assert (workspace / ".invincat").is_symlink()
