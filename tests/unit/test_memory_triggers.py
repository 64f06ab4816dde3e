"""When the memory agent runs and how it weighs what the user said."""

from __future__ import annotations

from pathlib import Path

import pytest

from invincat_server.runtime.config import ConfigError
from invincat_server.runtime.memory_agent.config import load_memory_agent_config
from invincat_server.runtime.memory_agent.evidence import MAX_TOTAL_CHARS, collect_evidence
from invincat_server.runtime.memory_agent.triggers import is_acknowledgement, is_explicit_request


@pytest.mark.parametrize(
    "text", ["ok", "OK!", "thanks", "Thank you.", "继续", "好的", "  yes ", "lgtm"]
)
def test_acknowledgements(text: str) -> None:
    assert is_acknowledgement(text)


@pytest.mark.parametrize(
    "text", ["ok, now add tests", "继续写测试", "use pytest", "thanks, but use -q"]
)
def test_real_requests_are_not_acknowledgements(text: str) -> None:
    assert not is_acknowledgement(text)


@pytest.mark.parametrize(
    ("text", "explicit"),
    [
        ("remember we use pytest -q", True),
        ("From now on, answer in French", True),
        ("always run ruff first", True),
        ("记住：我们用 pnpm", True),
        ("以后都用中文回答", True),
        ("run the tests", False),
    ],
)
def test_explicit_requests(text: str, explicit: bool) -> None:
    assert is_explicit_request(text) is explicit


def test_extraction_can_be_turned_off_per_project(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".invincat").mkdir(parents=True)
    home.mkdir()
    assert load_memory_agent_config(home, project, env={}).enabled
    (project / ".invincat" / "config.toml").write_text("[memory]\nextraction = false\n")
    assert not load_memory_agent_config(home, project, env={}).enabled
    env = {"INVINCAT_MEMORY_EXTRACTION": "on"}
    assert load_memory_agent_config(home, project, env=env).enabled
    (home / "config.toml").write_text("[memory]\nmin_turn_interval = 3\n")
    assert load_memory_agent_config(home, project, env={}).min_turn_interval == 3
    (project / ".invincat" / "config.toml").write_text("[memory]\nextraction = 'maybe'\n")
    with pytest.raises(ConfigError, match="extraction"):
        load_memory_agent_config(home, project, env={})


def test_evidence_prefers_build_and_test_signals_and_respects_budgets() -> None:
    results = [
        ("read_file", {"path": "README.md"}, "Welcome to the project. " * 100),
        ("execute", {"command": "pytest -q"}, "5 passed in 0.1s " * 100),
        ("read_file", {"path": "pyproject.toml"}, "[tool.ruff]\nline-length = 100\n" * 50),
        ("grep", {"pattern": "x"}, "pytest pytest pytest"),
        ("write_file", {"path": "Makefile"}, "Wrote 3 lines to Makefile: make test"),
        ("execute", {"command": "npm test"}, "jest passed " * 60),
    ]
    items = collect_evidence(results, redact=lambda t: t)
    assert 1 <= len(items) <= 3
    assert all(len(i.text) <= 600 for i in items)
    assert sum(len(i.text) for i in items) <= MAX_TOTAL_CHARS
    assert all(i.tool != "grep" for i in items)
    assert "README.md" not in [i.label for i in items]
