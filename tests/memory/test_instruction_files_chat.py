"""The team's instruction files through the real `invincat chat` process and the scripted
model (issue 25 item 4): AGENTS.md from the root down to `--cwd` reaches the main model
ahead of governed memory, labelled by source, a secret in it redacted; the memory model is
told the files exist and must not copy them, is not handed a read of one as evidence, and
the files are never written. In a session, an AGENTS.md edited between turns reaches the
next model call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.memory.credentials import credentials, leaked
from tests.sessions import SessionFactory, run_turn
from tests.terminal.cli_process import run_invincat

MEMORY_MODEL = "memory-model"
CONVENTION = "Every module gets a docstring saying why it exists."


def remember(env: dict[str, str], workspace: Path, content: str) -> None:
    batch = {
        "operations": [
            {
                "op": "create",
                "scope": "project",
                "section": "Testing",
                "content": content,
                "confidence": "high",
                "score": 90,
                "score_reason": "the team's rule",
            }
        ]
    }
    result = run_invincat(
        ["memory", "apply", "--scope", "project", "-", "--cwd", str(workspace)],
        env,
        input=json.dumps(batch),
    )
    assert result.code == 0, result.stderr


def system_of(request: dict[str, Any]) -> str:
    first = request["messages"][0]
    assert first["role"] == "system", request
    return str(first["content"])


def test_agents_md_reaches_the_model_ahead_of_memory_redacted_and_is_never_written(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
) -> None:
    creds = credentials()
    root_rules = f"{CONVENTION}\nDeploy keys:\n" + "".join(c.text + "\n" for c in creds)
    (workspace / "AGENTS.md").write_text(root_rules, encoding="utf-8")
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "AGENTS.md").write_text("In pkg/, tests live next to the code.\n")
    before = {p: p.read_bytes() for p in workspace.rglob("AGENTS.md")}
    remember(invincat_env, workspace, "Run the tests with pytest -q")
    read = {"name": "read_file", "arguments": {"path": "AGENTS.md"}}
    fake_openai.add_steps(
        [
            {"match": {"model": "fake-model"}, "tool_calls": [read]},
            {"match": {"model": "fake-model"}, "content": "Understood."},
            {
                "match": {"model": MEMORY_MODEL},
                "tool_calls": [
                    {
                        "name": "submit_memory_operations",
                        "arguments": {"operations": [{"op": "noop"}]},
                    }
                ],
            },
        ]
    )
    env = {
        **invincat_env,
        "INVINCAT_MEMORY_EXTRACTION": "on",
        "INVINCAT_MEMORY_MODEL": MEMORY_MODEL,
    }

    result = run_invincat(
        ["chat", "remember how we work here", "--json", "--yes", "--cwd", str(workspace / "pkg")],
        env,
    )

    assert result.code == 0, result.stderr
    main = [r for r in fake_openai.chat_requests() if r["model"] == "fake-model"]
    system = system_of(main[0])
    instructions = system.index("## Project instructions")
    assert instructions < system.index("## Long-term memory")
    assert system.index("### source: AGENTS.md — AGENTS.md\n" + CONVENTION) > instructions
    assert system.index("### source: AGENTS.md — AGENTS.md") < system.index(
        "### source: AGENTS.md — pkg/AGENTS.md\nIn pkg/, tests live next to the code."
    )
    assert "- [Testing] Run the tests with pytest -q" in system
    assert not leaked(system, creds), leaked(system, creds)
    assert "[REDACTED:" in system
    # The memory model hears that the files exist, and gets no read of one as evidence.
    # The first: its noop to "remember …" is asked about once more (test_retries.py).
    memory_request = next(r for r in fake_openai.chat_requests() if r["model"] == MEMORY_MODEL)
    memory_system = system_of(memory_request)
    memory_user = str(memory_request["messages"][1]["content"])
    assert "Never copy" in memory_system and "AGENTS.md" in memory_system
    assert "## Project instruction files" in memory_user
    assert "AGENTS.md, pkg/AGENTS.md" in memory_user
    assert "## Project evidence" not in memory_user
    assert not leaked(memory_user, creds)
    assert {p: p.read_bytes() for p in workspace.rglob("AGENTS.md")} == before


async def test_an_edited_agents_md_reaches_the_next_model_call(
    fake_openai: FakeOpenAIServer, make_session: SessionFactory, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Use tabs.\n", encoding="utf-8")
    fake_openai.add_steps([{"content": "Tabs."}, {"content": "Spaces."}])
    session = await make_session()

    thread, _ = await run_turn(session, "how do we indent?")
    (workspace / "AGENTS.md").write_text("Use four spaces.\n", encoding="utf-8")
    await run_turn(session, "and now?", thread)

    first, second = (system_of(r) for r in fake_openai.chat_requests())
    assert "Use tabs." in first and "Use four spaces." not in first
    assert "Use four spaces." in second and "Use tabs." not in second


def test_a_bad_instructions_setting_is_one_error(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
) -> None:
    (invincat_home / "config.toml").write_text('[instructions]\nmax_bytes = "lots"\n')

    result = run_invincat(["chat", "hi", "--cwd", str(workspace)], invincat_env)

    assert result.code == 2
    assert "[instructions] max_bytes must be an integer" in result.stderr
    assert "Traceback" not in result.stderr
    assert fake_openai.chat_requests() == []


def test_a_claude_md_linked_to_agents_md_is_one_file_under_both_names(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
) -> None:
    """The common one-file-for-all setup: CLAUDE.md a link to AGENTS.md. Its text reaches
    the model once, its heading naming both; a read of it under another name (the link,
    a docs/ link to it) is no evidence for memory, as a read of AGENTS.md is not."""
    (workspace / "AGENTS.md").write_text(CONVENTION + "\n", encoding="utf-8")
    (workspace / "CLAUDE.md").symlink_to("AGENTS.md")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "CONTRIBUTING.md").symlink_to("../AGENTS.md")
    reads = [
        {"name": "read_file", "arguments": {"path": "CLAUDE.md"}},
        {"name": "read_file", "arguments": {"path": "docs/CONTRIBUTING.md"}},
    ]
    fake_openai.add_steps(
        [
            {"match": {"model": "fake-model"}, "tool_calls": reads},
            {"match": {"model": "fake-model"}, "content": "Understood."},
            {
                "match": {"model": MEMORY_MODEL},
                "tool_calls": [
                    {
                        "name": "submit_memory_operations",
                        "arguments": {"operations": [{"op": "noop"}]},
                    }
                ],
            },
        ]
    )
    env = {
        **invincat_env,
        "INVINCAT_MEMORY_EXTRACTION": "on",
        "INVINCAT_MEMORY_MODEL": MEMORY_MODEL,
    }

    result = run_invincat(
        ["chat", "remember how we work here", "--json", "--yes", "--cwd", str(workspace)], env
    )

    assert result.code == 0, result.stderr
    main = [r for r in fake_openai.chat_requests() if r["model"] == "fake-model"]
    system = system_of(main[0])
    assert system.count(CONVENTION) == 1
    assert "### source: AGENTS.md — AGENTS.md (also CLAUDE.md)\n" + CONVENTION in system
    tool_results = [m for m in main[1]["messages"] if m["role"] == "tool"]
    assert [CONVENTION in str(m["content"]) for m in tool_results] == [True, True]
    # The first: its noop to "remember …" is asked about once more (test_retries.py).
    memory_request = next(r for r in fake_openai.chat_requests() if r["model"] == MEMORY_MODEL)
    memory_user = str(memory_request["messages"][1]["content"])
    assert "AGENTS.md, CLAUDE.md" in memory_user
    assert "## Project evidence" not in memory_user
