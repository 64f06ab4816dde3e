"""Workspace confinement: nothing outside the workspace can be read or written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from invincat_server.runtime.policy.workspace import Workspace, WorkspaceError
from invincat_server.runtime.tools import build_core_tools


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.txt").write_text("top secret\n")
    return directory


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "ws"
    directory.mkdir()
    (directory / "src").mkdir()
    (directory / "src" / "main.py").write_text("print('hi')\n")
    return directory


@pytest.fixture
def workspace(root: Path) -> Workspace:
    return Workspace(root)


@pytest.fixture
def tools(workspace: Workspace) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in build_core_tools(workspace)}


async def call(tool: BaseTool, **args: Any) -> ToolMessage:
    message = await tool.ainvoke({"type": "tool_call", "id": "1", "name": tool.name, "args": args})
    assert isinstance(message, ToolMessage)
    return message


# --------------------------------------------------------------------------- resolve


def test_root_is_realpath(tmp_path: Path, root: Path) -> None:
    link = tmp_path / "link-to-ws"
    link.symlink_to(root)
    assert Workspace(link).root == root.resolve()
    assert Workspace(str(root)).root == root.resolve()


def test_relative_and_absolute_paths_inside(workspace: Workspace, root: Path) -> None:
    assert workspace.resolve("src/main.py") == root / "src" / "main.py"
    assert workspace.resolve(str(root / "src" / "main.py")) == root / "src" / "main.py"
    assert workspace.resolve(".") == root
    assert workspace.resolve("src/../src/./main.py") == root / "src" / "main.py"
    # Not-yet-existing paths are fine as long as they stay inside.
    assert workspace.resolve("new/dir/file.txt") == root / "new" / "dir" / "file.txt"


def test_tilde_is_an_ordinary_name(workspace: Workspace, root: Path) -> None:
    assert workspace.resolve("~/notes.txt") == root / "~" / "notes.txt"


def test_relative_display(workspace: Workspace, root: Path) -> None:
    assert workspace.relative(root) == "."
    assert workspace.relative(root / "src" / "main.py") == "src/main.py"


def test_dotdot_escape_is_refused_with_clear_message(workspace: Workspace, root: Path) -> None:
    with pytest.raises(WorkspaceError) as info:
        workspace.resolve("../x")
    message = str(info.value)
    assert "'../x'" in message
    assert str(root.parent / "x") in message
    assert str(root) in message
    assert "outside the workspace" in message
    assert "only work inside the workspace" in message


def test_dotdot_after_missing_dirs_is_refused(workspace: Workspace) -> None:
    with pytest.raises(WorkspaceError):
        workspace.resolve("nope/also-nope/../../../x")


def test_absolute_path_outside_is_refused(workspace: Workspace, outside: Path) -> None:
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        workspace.resolve(str(outside / "secret.txt"))
    with pytest.raises(WorkspaceError):
        workspace.resolve("/etc/passwd")


def test_sibling_with_common_prefix_is_outside(tmp_path: Path, workspace: Workspace) -> None:
    # /tmp/x/ws-evil starts with the string /tmp/x/ws but is not inside it.
    sibling = tmp_path / "ws-evil"
    sibling.mkdir()
    with pytest.raises(WorkspaceError):
        workspace.resolve(str(sibling / "f.txt"))


def test_symlinks_leading_outside_are_refused(
    workspace: Workspace, root: Path, outside: Path
) -> None:
    (root / "secret-link").symlink_to(outside / "secret.txt")
    (root / "outdir").symlink_to(outside)
    (root / "dangling").symlink_to(outside / "does-not-exist-yet.txt")
    for path in ("secret-link", "outdir", "outdir/secret.txt", "outdir/new.txt", "dangling"):
        with pytest.raises(WorkspaceError, match="outside the workspace"):
            workspace.resolve(path)


def test_symlink_inside_workspace_is_followed(workspace: Workspace, root: Path) -> None:
    (root / "alias").symlink_to(root / "src")
    assert workspace.resolve("alias/main.py") == root / "src" / "main.py"


def slashless(path: Path) -> str:
    """`path` as a small model copies it from the system prompt: without its leading /."""
    return str(path).lstrip("/")


def test_the_root_spelled_without_its_slash_is_the_root(workspace: Workspace, root: Path) -> None:
    assert workspace.resolve(slashless(root / "src" / "main.py")) == root / "src" / "main.py"
    assert workspace.resolve(slashless(root)) == root
    assert workspace.resolve(slashless(root / "new.txt"), write=True) == root / "new.txt"
    assert workspace.resolve("./" + slashless(root / "src")) == root / "src"


def test_a_slashless_root_is_still_confined(
    workspace: Workspace, root: Path, outside: Path
) -> None:
    (root / "secret-link").symlink_to(outside / "secret.txt")
    for path in (root / "secret-link", root / ".." / "outside" / "secret.txt"):
        with pytest.raises(WorkspaceError, match="outside the workspace"):
            workspace.resolve(slashless(path))
    # Another folder's path without its slash is a path in the project, as ever.
    other = slashless(outside / "secret.txt")
    assert workspace.resolve(other) == root / other


def test_a_project_folder_of_that_name_is_read_as_given(workspace: Workspace, root: Path) -> None:
    first = root.parts[1]  # "tmp" for a root under /tmp
    (root / first).mkdir()
    given = slashless(root / "src" / "main.py")
    assert workspace.resolve(given) == root / given


def test_the_roots_last_folder_before_an_existing_file_is_the_root(
    workspace: Workspace, root: Path
) -> None:
    # Qwen2.5-Coder 1.5B asked for project/calc.py in a project rooted at …/project.
    name = root.name
    assert workspace.resolve(f"{name}/src/main.py") == root / "src" / "main.py"
    # A guess never decides where a write lands: such a write is refused, naming the file.
    with pytest.raises(WorkspaceError, match=r"this file is 'src/main\.py'\. Nothing was written"):
        workspace.resolve(f"{name}/src/main.py", write=True)
    # Nothing there after the folder's name: an ordinary path (a new folder of that name).
    assert workspace.resolve(f"{name}/new.py", write=True) == root / name / "new.py"
    (root / name).mkdir()
    (root / name / "main.py").write_text("mine")
    assert workspace.resolve(f"{name}/main.py") == root / name / "main.py"


def test_nul_byte_is_refused(workspace: Workspace) -> None:
    with pytest.raises(WorkspaceError):
        workspace.resolve("a\x00b")


# --------------------------------------------------------------------------- through tools


async def test_read_outside_is_an_error_message(
    tools: dict[str, BaseTool], root: Path, outside: Path
) -> None:
    (root / "secret-link").symlink_to(outside / "secret.txt")
    for path in ("../outside/secret.txt", str(outside / "secret.txt"), "secret-link"):
        message = await call(tools["read_file"], path=path)
        assert message.status == "error"
        assert "outside the workspace" in message.content
        assert "top secret" not in message.content


async def test_read_file_takes_the_root_without_its_slash(
    tools: dict[str, BaseTool], root: Path
) -> None:
    message = await call(tools["read_file"], path=slashless(root / "src" / "main.py"))
    assert message.status == "success", message.content
    assert "print('hi')" in message.content


async def test_writes_outside_are_refused_and_write_nothing(
    tools: dict[str, BaseTool], root: Path, outside: Path
) -> None:
    (root / "secret-link").symlink_to(outside / "secret.txt")
    (root / "outdir").symlink_to(outside)
    attempts = [
        ("write_file", {"path": "../outside/new.txt", "content": "x"}),
        ("write_file", {"path": str(outside / "new.txt"), "content": "x"}),
        ("write_file", {"path": "secret-link", "content": "x"}),
        ("write_file", {"path": "outdir/new.txt", "content": "x"}),
        ("write_file", {"path": "outdir/sub/new.txt", "content": "x"}),
        ("edit_file", {"path": "secret-link", "old_string": "top", "new_string": "no"}),
        ("edit_file", {"path": "outdir/secret.txt", "old_string": "top", "new_string": "no"}),
    ]
    before = sorted(os.listdir(outside))
    for name, args in attempts:
        message = await call(tools[name], **args)
        assert message.status == "error", (name, args)
        assert "outside the workspace" in message.content
    assert sorted(os.listdir(outside)) == before
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_listing_and_searching_outside_are_refused(
    tools: dict[str, BaseTool], root: Path, outside: Path
) -> None:
    (root / "outdir").symlink_to(outside)
    for name, args in [
        ("ls", {"path": "outdir"}),
        ("ls", {"path": ".."}),
        ("glob", {"pattern": "*", "path": "outdir"}),
        ("grep", {"pattern": "secret", "path": "outdir"}),
        ("grep", {"pattern": "secret", "path": str(outside)}),
    ]:
        message = await call(tools[name], **args)
        assert message.status == "error", (name, args)
        assert "outside the workspace" in message.content
