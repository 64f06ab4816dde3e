"""read_file / write_file / edit_file / ls, editor buffers, edits and previews."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from invincat_server.runtime.policy.workspace import Workspace, WorkspaceError
from invincat_server.runtime.tool_traits import READS_FILES, WRITES_FILES
from invincat_server.runtime.tools import (
    DiskOnly,
    DocumentSource,
    build_core_tools,
)
from invincat_server.runtime.tools.edits import EditError, apply_edit, unified_diff
from invincat_server.runtime.tools.preview import ProposedChange, preview_change


class FakeBuffers:
    """An editor with some files open; optionally accepts writes into its buffers."""

    def __init__(self, buffers: dict[Path, str] | None = None, *, accept: bool = True) -> None:
        self.buffers = dict(buffers or {})
        self.accept = accept
        self.writes: list[tuple[Path, str]] = []

    def read_text(self, path: Path) -> str | None:
        return self.buffers.get(path)

    async def write_text(self, path: Path, text: str) -> bool:
        self.writes.append((path, text))
        if self.accept:
            self.buffers[path] = text
        return self.accept


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "ws"
    directory.mkdir()
    return directory


@pytest.fixture
def workspace(root: Path) -> Workspace:
    return Workspace(root)


def make_tools(workspace: Workspace, documents: DocumentSource | None = None) -> dict[str, Any]:
    return {tool.name: tool for tool in build_core_tools(workspace, documents=documents)}


@pytest.fixture
def tools(workspace: Workspace) -> dict[str, BaseTool]:
    return make_tools(workspace)


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


# --------------------------------------------------------------------------- tool set


def test_tool_set_and_schemas(workspace: Workspace) -> None:
    tools = make_tools(workspace)
    assert set(tools) == {"read_file", "write_file", "edit_file", "ls", "glob", "grep", "execute"}
    assert set(tools) >= WRITES_FILES | READS_FILES
    expected = {
        "read_file": {"path", "offset", "limit"},
        "write_file": {"path", "content"},
        "edit_file": {"path", "old_string", "new_string", "replace_all"},
        "ls": {"path"},
        "glob": {"pattern", "path"},
        "grep": {"pattern", "path", "glob"},
        "execute": {"command", "timeout", "unsandboxed", "reason"},
    }
    for name, params in expected.items():
        schema = tools[name].tool_call_schema.model_json_schema()
        assert set(schema["properties"]) == params, name
        for field, spec in schema["properties"].items():
            assert spec.get("description"), f"{name}.{field} has no description"
        assert tools[name].handle_tool_error is True


def test_disk_only_is_a_document_source() -> None:
    assert isinstance(DiskOnly(), DocumentSource)
    assert DiskOnly().read_text(Path("/x")) is None


# --------------------------------------------------------------------------- read_file


async def test_read_numbers_lines_like_cat_n(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "a.py").write_text("one\ntwo\n\nfour\n")
    assert await ok(tools["read_file"], path="a.py") == (
        "     1\tone\n     2\ttwo\n     3\t\n     4\tfour"
    )


async def test_read_offset_limit_and_remaining_trailer(
    tools: dict[str, BaseTool], root: Path
) -> None:
    (root / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    text = await ok(tools["read_file"], path="big.txt", offset=2, limit=3)
    lines = text.splitlines()
    assert lines[:3] == ["     3\tline 3", "     4\tline 4", "     5\tline 5"]
    assert "5 more lines" in lines[3]
    assert "offset=5" in lines[3]
    # The last page has no trailer.
    text = await ok(tools["read_file"], path="big.txt", offset=8)
    assert text.splitlines() == ["     9\tline 9", "    10\tline 10"]


async def test_read_default_limit_is_2000_lines(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "huge.txt").write_text("x\n" * 2500)
    lines = (await ok(tools["read_file"], path="huge.txt")).splitlines()
    assert len(lines) == 2001
    assert lines[1999] == "  2000\tx"
    assert "500 more lines" in lines[2000]


async def test_read_truncates_long_lines(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "min.js").write_text("a" * 2500 + "\nshort\n")
    lines = (await ok(tools["read_file"], path="min.js")).splitlines()
    assert lines[0].startswith("     1\t" + "a" * 2000)
    assert "a" * 2001 not in lines[0]
    assert "500 more characters" in lines[0]
    assert lines[1] == "     2\tshort"


async def test_read_crlf_file_shows_clean_lines(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "win.txt").write_bytes(b"a\r\nb\r\n")
    assert await ok(tools["read_file"], path="win.txt") == "     1\ta\n     2\tb"


async def test_read_empty_file_says_so(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "empty.txt").write_text("")
    assert "empty" in await ok(tools["read_file"], path="empty.txt")


async def test_read_errors(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "dir").mkdir()
    (root / "blob.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    (root / "short.txt").write_text("1\n2\n")
    assert "not found" in (await error(tools["read_file"], path="missing.txt")).lower()
    assert "directory" in await error(tools["read_file"], path="dir")
    assert "binary" in await error(tools["read_file"], path="blob.bin")
    assert "past the end" in await error(tools["read_file"], path="short.txt", offset=5)
    assert "limit" in await error(tools["read_file"], path="short.txt", limit=0)


async def test_read_prefers_open_editor_buffer(workspace: Workspace, root: Path) -> None:
    (root / "a.py").write_text("on disk\n")
    tools = make_tools(workspace, FakeBuffers({root / "a.py": "unsaved edit\n"}))
    assert await ok(tools["read_file"], path="a.py") == "     1\tunsaved edit"


# --------------------------------------------------------------------------- write_file


async def test_write_creates_parents_and_reports(tools: dict[str, BaseTool], root: Path) -> None:
    result = await ok(tools["write_file"], path="pkg/sub/mod.py", content="a = 1\nb = 2\n")
    assert (root / "pkg" / "sub" / "mod.py").read_text() == "a = 1\nb = 2\n"
    assert "Wrote 2 lines to pkg/sub/mod.py" in result
    assert "new file" in result
    result = await ok(tools["write_file"], path="pkg/sub/mod.py", content="c = 3")
    assert (root / "pkg" / "sub" / "mod.py").read_text() == "c = 3"
    assert "Wrote 1 line to pkg/sub/mod.py" in result
    assert "overwrote" in result


async def test_write_goes_through_editor_when_it_accepts(workspace: Workspace, root: Path) -> None:
    target = root / "a.py"
    target.write_text("disk\n")
    buffers = FakeBuffers({target: "buffer\n"}, accept=True)
    tools = make_tools(workspace, buffers)
    await ok(tools["write_file"], path="a.py", content="new\n")
    assert buffers.writes == [(target, "new\n")]
    assert target.read_text() == "disk\n"  # the editor owns the file now, not us


async def test_write_falls_back_to_disk_when_editor_declines(
    workspace: Workspace, root: Path
) -> None:
    buffers = FakeBuffers(accept=False)
    tools = make_tools(workspace, buffers)
    await ok(tools["write_file"], path="new.txt", content="hello\n")
    assert buffers.writes == [(root / "new.txt", "hello\n")]
    assert (root / "new.txt").read_text() == "hello\n"


async def test_write_errors(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "dir").mkdir()
    (root / "blob.bin").write_bytes(b"\x00\x01")
    assert "directory" in await error(tools["write_file"], path="dir", content="x")
    assert "not a UTF-8 text file" in await error(tools["write_file"], path="blob.bin", content="x")
    assert (root / "blob.bin").read_bytes() == b"\x00\x01"


# --------------------------------------------------------------------------- edit_file


async def test_edit_replaces_unique_string(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "a.py").write_text("def f():\n    return 1\n")
    result = await ok(tools["edit_file"], path="a.py", old_string="return 1", new_string="return 2")
    assert result == "Edited a.py: 1 replacement."
    assert (root / "a.py").read_text() == "def f():\n    return 2\n"


async def test_edit_not_found_and_not_unique(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "a.py").write_text("x = 1\nx = 1\n")
    message = await error(tools["edit_file"], path="a.py", old_string="y = 2", new_string="z")
    assert "old_string not found in a.py" in message
    assert "read the file again" in message
    message = await error(tools["edit_file"], path="a.py", old_string="x = 1", new_string="x = 2")
    assert "occurs 2 times" in message
    assert "replace_all" in message
    assert (root / "a.py").read_text() == "x = 1\nx = 1\n"  # untouched on error
    message = await error(tools["edit_file"], path="missing.py", old_string="a", new_string="b")
    assert "does not exist" in message


async def test_edit_replace_all(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "a.py").write_text("foo(1)\nfoo(2)\nfoo(3)\n")
    result = await ok(
        tools["edit_file"], path="a.py", old_string="foo", new_string="bar", replace_all=True
    )
    assert result == "Edited a.py: 3 replacements."
    assert (root / "a.py").read_text() == "bar(1)\nbar(2)\nbar(3)\n"


async def test_edit_applies_to_editor_buffer(workspace: Workspace, root: Path) -> None:
    target = root / "a.py"
    target.write_text("old disk text\n")
    buffers = FakeBuffers({target: "value = 'unsaved'\n"})
    tools = make_tools(workspace, buffers)
    await ok(tools["edit_file"], path="a.py", old_string="unsaved", new_string="edited")
    assert buffers.buffers[target] == "value = 'edited'\n"
    assert target.read_text() == "old disk text\n"


async def test_edit_keeps_crlf_line_endings(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "win.txt").write_bytes(b"first\r\nsecond\r\nthird\r\n")
    await ok(tools["edit_file"], path="win.txt", old_string="first\nsecond", new_string="1\n2")
    assert (root / "win.txt").read_bytes() == b"1\r\n2\r\nthird\r\n"


# --------------------------------------------------------------------------- ls


async def test_ls_sorted_with_dir_slashes(tools: dict[str, BaseTool], root: Path) -> None:
    (root / "b.txt").write_text("")
    (root / "a_dir").mkdir()
    (root / ".hidden").write_text("")
    (root / "c").mkdir()
    assert (await ok(tools["ls"])).splitlines() == [".hidden", "a_dir/", "b.txt", "c/"]
    assert "empty" in await ok(tools["ls"], path="c")
    assert "not a directory" in await error(tools["ls"], path="b.txt")
    assert "not found" in await error(tools["ls"], path="nope")


async def test_ls_caps_a_huge_directory_and_says_how_many_more(
    tools: dict[str, BaseTool], root: Path
) -> None:
    huge = root / "huge"
    huge.mkdir()
    for i in range(1005):
        (huge / f"f{i:04d}").write_text("")
    lines = (await ok(tools["ls"], path="huge")).splitlines()
    assert len(lines) == 1001
    assert lines[0] == "f0000" and lines[999] == "f0999"
    assert lines[1000] == "... and 5 more entries (use glob to narrow down)."


# --------------------------------------------------------------------------- pure edits


def test_apply_edit_errors() -> None:
    with pytest.raises(EditError, match="empty"):
        apply_edit("abc", "", "x")
    with pytest.raises(EditError, match="old_string not found"):
        apply_edit("abc", "zzz", "x")
    with pytest.raises(EditError, match="occurs 2 times"):
        apply_edit("ab ab", "ab", "x")
    assert apply_edit("ab ab", "ab", "x", replace_all=True) == ("x x", 2)
    assert apply_edit("ab cd", "cd", "x") == ("ab x", 1)
    assert issubclass(EditError, ValueError)


def test_unified_diff_format() -> None:
    diff = unified_diff("src/a.py", "a\nb\nc\n", "a\nB\nc\n")
    assert diff.splitlines() == [
        "--- a/src/a.py",
        "+++ b/src/a.py",
        "@@ -1,3 +1,3 @@",
        " a",
        "-b",
        "+B",
        " c",
    ]
    new = unified_diff("n.txt", None, "x\ny\n")
    assert new.splitlines()[:3] == ["--- /dev/null", "+++ b/n.txt", "@@ -0,0 +1,2 @@"]
    assert unified_diff("same.txt", "x\n", "x\n") == ""
    assert "\\ No newline at end of file" in unified_diff("f", "x\n", "x")


# --------------------------------------------------------------------------- preview


def test_preview_write_and_edit(workspace: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    change = preview_change(
        workspace, DiskOnly(), "edit_file", {"path": "a.py", "old_string": "1", "new_string": "2"}
    )
    assert isinstance(change, ProposedChange)
    assert change.path == "a.py"
    assert change.abs_path == root / "a.py"
    assert (change.old_text, change.new_text) == ("x = 1\n", "x = 2\n")
    assert "-x = 1" in change.diff and "+x = 2" in change.diff
    assert (root / "a.py").read_text() == "x = 1\n"  # preview writes nothing

    change = preview_change(workspace, DiskOnly(), "write_file", {"path": "n.txt", "content": "hi"})
    assert change is not None and change.old_text is None
    assert change.diff.startswith("--- /dev/null")
    assert not (root / "n.txt").exists()

    assert preview_change(workspace, DiskOnly(), "execute", {"command": "ls"}) is None


def test_preview_reads_editor_buffer(workspace: Workspace, root: Path) -> None:
    (root / "a.py").write_text("disk\n")
    buffers = FakeBuffers({root / "a.py": "buffer\n"})
    change = preview_change(workspace, buffers, "write_file", {"path": "a.py", "content": "new\n"})
    assert change is not None and change.old_text == "buffer\n"


def test_preview_raises_when_call_cannot_succeed(workspace: Workspace, root: Path) -> None:
    (root / "a.py").write_text("x\n")
    with pytest.raises(WorkspaceError):
        preview_change(workspace, DiskOnly(), "write_file", {"path": "../x", "content": ""})
    with pytest.raises(EditError):
        preview_change(
            workspace,
            DiskOnly(),
            "edit_file",
            {"path": "a.py", "old_string": "nope", "new_string": "y"},
        )
    with pytest.raises(EditError):
        preview_change(workspace, DiskOnly(), "write_file", {"path": "a.py"})
