"""`invincat rewind THREAD --to N` starts at turn N's first change: a rewind recorded
after turn N-1 (and so before turn N) is not undone by going back to before turn N."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.rewind.scenario import call, make_project, thread_of, tree
from tests.terminal.cli_process import run_invincat


def _turn(env: dict[str, str], root: Path, prompt: str, thread: str | None = None) -> str:
    args = ["chat", prompt, "--yes", "--json", "--cwd", str(root)]
    result = run_invincat([*args, "--thread", thread] if thread else args, env)
    assert result.code == 0, result.stderr
    return thread_of(result)


def test_to_n_leaves_what_a_rewind_before_turn_n_restored(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=False)
    original = tree(workspace)
    fake_openai.add_steps(
        [call("write_file", path="written.txt", content="turn one\n"), {"content": "one"}]
    )
    thread = _turn(invincat_env, workspace, "first")
    # Turn 1 undone: written.txt is back to its original bytes (a rewind checkpoint).
    undone = run_invincat(["rewind", thread, "--to", "1", "--yes", "--json"], invincat_env)
    assert undone.code == 0, undone.stderr
    assert tree(workspace) == original
    fake_openai.add_steps(
        [
            call("edit_file", path="src/edited.py", old_string="return 1", new_string="return 2"),
            {"content": "two"},
        ]
    )
    _turn(invincat_env, workspace, "second", thread)
    fake_openai.add_steps(
        [call("write_file", path="third.txt", content="turn three\n"), {"content": "three"}]
    )
    _turn(invincat_env, workspace, "third", thread)

    result = run_invincat(["rewind", thread, "--to", "2", "--yes", "--json"], invincat_env)
    assert result.code == 0, result.stderr
    plan, done = result.events
    assert [f["path"] for f in plan["files"]] == ["src/edited.py", "third.txt"]
    assert done["restored"] == ["src/edited.py", "third.txt"]
    # Before turn 2 the files were as the first rewind left them: the original tree.
    assert tree(workspace) == original

    # --to 3 undoes turn 3 only.
    again = run_invincat(["rewind", thread, "--undo", "--yes", "--json"], invincat_env)
    assert again.code == 0, again.stderr
    third = run_invincat(["rewind", thread, "--to", "3", "--yes", "--json"], invincat_env)
    assert third.code == 0, third.stderr
    assert third.events[1]["restored"] == ["third.txt"]
    assert (workspace / "src" / "edited.py").read_text() == "def f():\n    return 2\n"
    assert tree(workspace)["third.txt"] == original["third.txt"]
