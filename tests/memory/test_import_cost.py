"""The memory package stays cheap to import: no LangChain, no front ends."""

from __future__ import annotations

import json
from pathlib import Path

from tests.imports import modules_after


def test_importing_the_memory_package_loads_no_heavy_or_front_end_modules() -> None:
    loaded = modules_after("import invincat_server.runtime.memory")
    bad = [
        m
        for m in loaded
        if m.split(".")[0]
        in ("langchain", "langchain_core", "langgraph", "openai", "pygls", "lsprotocol")
        or m.startswith(("invincat_server.lsp", "invincat_server.terminal"))
    ]
    assert sorted(bad) == []


def test_the_merge_driver_loads_no_agent_stack_front_end_or_event_loop(tmp_path: Path) -> None:
    """git starts `invincat memory merge-driver` for every merge of the store (goal: under
    0.5 s with process start, bench/bench_merge.py): the command line hands it over before
    building the other subcommands, and it finds the project root without the registry."""
    (tmp_path / ".git").mkdir()
    empty = {"version": 1, "scope": "project", "next_seq": 1, "items": []}
    item = {
        "id": "mem_p_000001",
        "scope": "project",
        "section": "Testing",
        "content": "the tests run with pytest -q",
        "score": 50,
        "tier": "warm",
        "created_at": "2026-01-01T00:00:00+00:00",
        "updated_at": "2026-01-01T00:00:00+00:00",
    }
    sides = {"O": empty, "A": empty, "B": {**empty, "next_seq": 2, "items": [item]}}
    for name, doc in sides.items():
        (tmp_path / name).write_text(json.dumps(doc))
    argv = [
        "memory",
        "merge-driver",
        *(str(tmp_path / name) for name in sides),
        ".invincat/memory_project.json",
        "--cwd",
        str(tmp_path),
    ]
    loaded = modules_after(
        "import sys\nfrom invincat_server.cli import main\n"
        f"assert main({argv!r}) == 0\nsys.stderr.flush()"
    )
    assert json.loads((tmp_path / "A").read_text())["items"][0]["content"] == item["content"]
    bad = [
        m
        for m in loaded
        if m.split(".")[0] in ("langchain", "langchain_core", "langgraph", "openai", "asyncio")
        or m.startswith(
            (
                "invincat_server.warm",
                "invincat_server.terminal.memory_cli",
                "invincat_server.terminal.threads_cli",
                "invincat_server.runtime.project.registry",
            )
        )
    ]
    assert sorted(bad) == []
