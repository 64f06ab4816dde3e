"""Multi-root in Neovim (issue 16): one client for the session; a file of another root makes
that root a workspace folder of it, and `:Invincat chat` / `memory` name the current
buffer's folder (docs/editors.md, "Multi-root workspaces").

The scenarios record what the plugin sends, so they pass against a server without multi-root
(pygls advertises folder change notifications anyway); what only a multi-root server
answers is checked when its status lists projects."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import INVINCAT, RunNvim


def test_a_second_root_joins_the_one_client_and_requests_name_their_folder(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "b.py").write_text("print('b')\n")
    (workspace / "a.py").write_text("print('a')\n")
    fake_openai.add_steps([{"content": "Hi from b."}])
    a_uri, b_uri = workspace.resolve().as_uri(), other.resolve().as_uri()

    result = nvim("multiroot", other=str(other.resolve()), workspace_uri=a_uri, other_uri=b_uri)

    # One client; its folders: the cwd's root first, then the other root.
    assert result["clients"] == 1
    assert [f["uri"] for f in result["folders"]] == [a_uri, b_uri]
    assert [f["name"] for f in result["folders"]] == ["project", "other"]
    assert result["a_attached"]

    sent = result["sent"]
    folder_change = next(
        i for i, s in enumerate(sent) if s["method"] == "workspace/didChangeWorkspaceFolders"
    )
    assert sent[folder_change]["params"] == {
        "event": {"added": [{"uri": b_uri, "name": "other"}], "removed": []}
    }
    # The folder is announced before the file of it is opened, and only once.
    b_open = next(
        i
        for i, s in enumerate(sent)
        if s["method"] == "textDocument/didOpen"
        and s["params"]["textDocument"]["uri"] == b_uri + "/b.py"
    )
    assert folder_change < b_open
    assert sum(s["method"] == "workspace/didChangeWorkspaceFolders" for s in sent) == 1

    # :Invincat chat from b.py: its folder, and its context.
    [chat] = [s["params"] for s in sent if s["method"] == "invincat/chat"]
    assert chat["prompt"] == "hello from b"
    assert chat["folder"] == b_uri
    assert chat["context"]["activeDocument"]["uri"] == b_uri + "/b.py"

    # :Invincat memory from b.py lists b's project; the didChange of a's store did not
    # reload it, b's did; from a.py it lists a's project.
    assert result["from_b"].endswith("/other/b.py") and result["from_a"].endswith("/a.py")
    lists = [s["params"] for s in sent if s["method"] == "invincat/memory/list"]
    assert [params["folder"] for params in lists] == [b_uri, b_uri, a_uri]
    assert result["lists_after_other"] == 1
    assert result["title_b"].startswith(" Invincat memory — other")
    if result["multiroot_server"]:
        # A server with multi-root answers with the other project's store.
        assert result["store_b"] == str(other.resolve() / ".invincat" / "memory_project.json")


def test_with_vim_lsp_enable_a_second_root_joins_the_client_instead_of_a_second_server(
    nvim: RunNvim, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "b.py").write_text("print('b')\n")
    (workspace / "a.py").write_text("print('a')\n")
    a_uri, b_uri = workspace.resolve().as_uri(), other.resolve().as_uri()

    result = nvim("multiroot_enable", invincat=str(INVINCAT), other=str(other.resolve()))

    assert result["clients"] == 1 and result["attached_to"]
    assert [f["uri"] for f in result["folders"]] == [a_uri, b_uri]
    methods = [s["method"] for s in result["sent"]]
    assert methods == ["workspace/didChangeWorkspaceFolders", "textDocument/didOpen"]
    assert result["sent"][0]["params"]["event"]["added"] == [{"uri": b_uri, "name": "other"}]
    assert result["sent"][1]["params"]["textDocument"]["uri"] == b_uri + "/b.py"
