"""The memory package stays cheap to import: no LangChain, no front ends."""

from __future__ import annotations

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
