"""A project reached through a symlinked folder is the same project for every front end
(runtime/project/root.py's project_root): the warm server's worker list, `invincat rules`
and `invincat memory` name and use the real root whichever spelling the user typed. The
language server's half is in tests/lsp/test_multi_root.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import private_runtime_dir
from tests.terminal.cli_process import LiveInvincat, run_invincat


@pytest.fixture
def warm_env(invincat_env: dict[str, str]) -> Iterator[dict[str, str]]:
    with private_runtime_dir() as runtime:
        env = {**invincat_env, "XDG_RUNTIME_DIR": str(runtime), "INVINCAT_WARM_IDLE": "300"}
        env.pop("INVINCAT_WARM", None)
        yield env


def _json(args: list[str], env: dict[str, str]) -> object:
    done = run_invincat(args, env)
    assert done.code == 0, done.stderr
    return json.loads(done.stdout)


def test_a_symlinked_folder_is_the_same_project_for_warm_rules_and_memory(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    root = str(workspace.resolve())
    link = tmp_path / "link-to-project"
    link.symlink_to(workspace, target_is_directory=True)

    # A chat through the link, in a warm worker: listed under the real root while it asks,
    # and its 'always, this workspace' answer is a rule of that root.
    command = {"tool_calls": [{"name": "execute", "arguments": {"command": "pytest --version"}}]}
    fake_openai.add_steps([command, {"content": "ran"}])
    chat = LiveInvincat(["chat", "run the tests", "--json", "--cwd", str(link)], warm_env)
    try:
        chat.wait_for("approval_requested")
        [server] = _json(["server", "status", "--json"], warm_env)["servers"]  # type: ignore[index]
        [worker] = server["workers"]
        assert worker["project"] == root
        chat.send("w\n")
        chat.wait_for("turn_end", status="completed")
        assert chat.finish() == 0
    finally:
        if chat.proc.poll() is None:
            chat.kill()

    by_link = _json(["rules", "list", "--json", "--cwd", str(link)], warm_env)
    by_root = _json(["rules", "list", "--json", "--cwd", str(workspace)], warm_env)
    assert by_link == by_root
    [rule] = by_link["items"]  # type: ignore[index]
    assert (rule["workspace"], rule["command"]) == (root, "pytest")

    batch = tmp_path / "batch.json"
    entry = {"op": "create", "scope": "project", "section": "Testing", "content": "Run pytest"}
    batch.write_text(json.dumps({"operations": [entry]}))
    applied = _json(
        ["memory", "apply", "--scope", "project", str(batch), "--cwd", str(link)], warm_env
    )
    [made] = applied["applied"]  # type: ignore[index]
    listed = _json(["memory", "list", "--scope", "project", "--json", "--cwd", root], warm_env)
    assert [e["id"] for e in listed["items"]] == [made["id"]]  # type: ignore[index]
    assert listed["stores"]["project"] == str(
        workspace.resolve() / ".invincat" / "memory_project.json"
    )  # type: ignore[index]
