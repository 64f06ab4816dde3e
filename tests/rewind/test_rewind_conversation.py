"""`invincat rewind --conversation|--both`: the thread forgets the undone turns, so the
model never sees them again, and the thread goes on from there."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.rewind.scenario import call, make_project, thread_of, tree
from tests.terminal.cli_process import run_invincat


def _chat(env: dict[str, str], root: Path, prompt: str, thread: str | None = None) -> str:
    args = ["chat", prompt, "--yes", "--json", "--cwd", str(root)]
    result = run_invincat([*args, "--thread", thread] if thread else args, env)
    assert result.code == 0, result.stderr
    return thread_of(result)


def _user_texts(server: FakeOpenAIServer) -> list[str]:
    return [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "user"]


def test_both_restores_files_and_the_model_no_longer_sees_the_undone_turns(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=False)
    fake_openai.add_steps([{"content": "first answer"}])
    thread = _chat(invincat_env, workspace, "first prompt")
    before = tree(workspace)
    fake_openai.add_steps(
        [call("write_file", path="written.txt", content="second\n"), {"content": "second done"}]
    )
    _chat(invincat_env, workspace, "second prompt", thread)
    assert (workspace / "written.txt").read_text() == "second\n"

    result = run_invincat(
        ["rewind", thread, "--to", "2", "--both", "--yes", "--json"], invincat_env
    )
    assert result.code == 0, result.stderr
    done = result.of_type("rewind_done")[0]
    assert done["restored"] == ["written.txt"] and done["conversation_removed"] == 4
    assert tree(workspace) == before

    listing = run_invincat(["rewind", thread, "--json"], invincat_env)
    assert [t["prompt"] for t in listing.events[0]["turns"]] == ["first prompt"]

    fake_openai.add_steps([{"content": "third answer"}])
    _chat(invincat_env, workspace, "third prompt", thread)
    assert _user_texts(fake_openai) == ["first prompt", "third prompt"]
    assert not any("second" in str(m) for m in fake_openai.chat_requests()[-1]["messages"])


def test_conversation_only_leaves_the_files(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=False)
    fake_openai.add_steps(
        [call("write_file", path="written.txt", content="kept\n"), {"content": "done"}]
    )
    thread = _chat(invincat_env, workspace, "only prompt")
    result = run_invincat(
        ["rewind", thread, "--to", "1", "--conversation", "--yes", "--json"], invincat_env
    )
    assert result.code == 0, result.stderr
    assert result.of_type("rewind_done")[0]["restored"] == []
    assert (workspace / "written.txt").read_text() == "kept\n"
    listing = run_invincat(["rewind", thread, "--json"], invincat_env)
    assert listing.events[0]["turns"] == []
