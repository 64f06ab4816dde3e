"""A chat through the real `invincat` process with a store holding one bad entry: the
valid entries of both scopes reach the model's system prompt, the bad one does not, and
the store is byte for byte the same after the turn and its housekeeping (issue #23 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import run_invincat

from .bad_stores import GOOD_PROJECT, GOOD_USER, INVALID, leftovers, write_stores


@pytest.mark.parametrize(
    "kind", ["cite_number", "cite_5000_chars", "cite_nul_byte", "a_string", "content_megabytes"]
)
def test_a_chat_injects_the_valid_entries_and_writes_nothing(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
    kind: str,
) -> None:
    stores = write_stores(invincat_home, workspace, INVALID[kind])
    before = (stores[0].read_bytes(), stores[1].read_bytes())
    fake_openai.add_steps([{"content": "Noted."}])

    result = run_invincat(["chat", "hello", "--json", "--cwd", str(workspace)], invincat_env)

    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr
    [request] = fake_openai.chat_requests()
    system = request["messages"][0]["content"]
    assert "## Long-term memory" in system
    for content in (GOOD_USER, *GOOD_PROJECT):
        assert f"- [Testing] {content}" in system, system
    assert "fact number 3" not in system and "xxxxxxxxxx" not in system
    # The cleanup after the turn is a write: it refused, and the turn was not failed.
    assert result.of_type("turn_end"), result.stdout
    assert (stores[0].read_bytes(), stores[1].read_bytes()) == before
    # The housekeeping took the lock (which creates it and the .gitignore), and that is
    # all: no backup, no journal, no fresh store.
    assert set(leftovers(stores[1])) <= {".gitignore", "memory_project.lock"}


def test_search_memory_finds_the_valid_entries_next_to_a_bad_one(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
) -> None:
    stores = write_stores(invincat_home, workspace, INVALID["cite_number"])
    before = (stores[0].read_bytes(), stores[1].read_bytes())
    search = {"name": "search_memory", "arguments": {"query": "pytest ruff"}}
    fake_openai.add_steps([{"tool_calls": [search]}, {"content": "Found them."}])

    result = run_invincat(
        ["chat", "what do we use?", "--json", "--cwd", str(workspace)], invincat_env
    )

    assert result.code == 0, result.stderr
    [tool_result] = result.of_type("tool_result")
    assert tool_result["name"] == "search_memory" and tool_result["status"] == "success"
    for content in GOOD_PROJECT:
        assert content in tool_result["content"], tool_result
    assert "fact number 3" not in tool_result["content"]
    assert (stores[0].read_bytes(), stores[1].read_bytes()) == before
