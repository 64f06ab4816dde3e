"""`invincat rewind --code` on the real process: the tree goes back byte for byte, modes
too, whatever changed it (file tools or a shell command), git or not, and the user's
.git is untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.rewind.scenario import (
    call,
    git_state,
    make_project,
    run_changing_turn,
    thread_of,
    tree,
)
from tests.terminal.cli_process import run_invincat


@pytest.mark.parametrize("git", [True, False], ids=["git", "no-git"])
def test_rewind_code_restores_the_tree_byte_for_byte(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, git: bool
) -> None:
    make_project(workspace, git=git)
    before = tree(workspace)
    git_before = git_state(workspace) if git else None
    thread = thread_of(run_changing_turn(fake_openai, invincat_env, workspace))
    changed = tree(workspace)
    assert changed["written.txt"][0] == b"brand new\n"
    assert "gone.txt" not in changed and changed["fourth.txt"][0] == b"new\n"

    listing = run_invincat(["rewind", thread, "--json"], invincat_env)
    assert listing.code == 0, listing.stderr
    [turns] = listing.events
    assert turns["type"] == "rewind_turns"
    assert set(turns["turns"][0]["files"]) == {
        "written.txt",
        "src/edited.py",
        "third.txt",
        "gone.txt",
        "fourth.txt",
    }

    result = run_invincat(
        ["rewind", thread, "--to", "1", "--code", "--yes", "--json"], invincat_env
    )
    assert result.code == 0, result.stderr
    plan, done = result.events
    assert plan["type"] == "rewind_plan" and plan["conflicts"] == []
    actions = {f["path"]: f["action"] for f in plan["files"]}
    assert actions == {
        "written.txt": "modify",
        "src/edited.py": "modify",
        "third.txt": "modify",
        "gone.txt": "create",
        "fourth.txt": "delete",
    }
    assert "-    return 2" in next(f for f in plan["files"] if f["path"] == "src/edited.py")["diff"]
    assert done["type"] == "rewind_done" and done["failed"] == {}
    assert tree(workspace) == before
    if git:
        assert git_state(workspace) == git_before

    # The rewind is itself a checkpoint: undone, the turn's changes are back.
    undo = run_invincat(["rewind", thread, "--undo", "--yes", "--json"], invincat_env)
    assert undo.code == 0, undo.stderr
    assert tree(workspace) == changed


def test_a_file_changed_by_hand_is_kept_unless_named(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=True)
    before = tree(workspace)
    thread = thread_of(run_changing_turn(fake_openai, invincat_env, workspace))
    (workspace / "src" / "edited.py").write_text("def f():\n    return 3  # mine\n")

    result = run_invincat(["rewind", thread, "--to", "1", "--yes", "--json"], invincat_env)
    assert result.code == 0, result.stderr
    plan, done = result.events
    assert plan["conflicts"] == ["src/edited.py"]
    assert done["skipped"] == ["src/edited.py"]
    assert (workspace / "src" / "edited.py").read_text().endswith("# mine\n")
    assert tree(workspace)["written.txt"] == before["written.txt"]

    named = run_invincat(
        ["rewind", thread, "--to", "1", "--yes", "--overwrite", "src/edited.py", "--json"],
        invincat_env,
    )
    assert named.code == 0, named.stderr
    assert tree(workspace) == before


def test_without_a_terminal_or_yes_nothing_changes(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=False)
    thread = thread_of(run_changing_turn(fake_openai, invincat_env, workspace))
    changed = tree(workspace)
    result = run_invincat(["rewind", thread, "--to", "1"], invincat_env)
    assert result.code == 1
    assert "+old content" in result.stdout  # the diff was shown
    assert "No terminal to ask" in result.stderr
    assert tree(workspace) == changed


def test_bad_input_costs_that_item_only(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=False)
    thread = thread_of(run_changing_turn(fake_openai, invincat_env, workspace))
    unknown = run_invincat(["rewind", "t_nope", "--json"], invincat_env)
    assert unknown.code == 1 and "Unknown thread" in unknown.events[0]["message"]
    out_of_range = run_invincat(["rewind", thread, "--to", "5", "--yes"], invincat_env)
    assert out_of_range.code == 1 and "from 1 to 1" in out_of_range.stderr
    bad_number = run_invincat(["rewind", thread, "--to", "zero"], invincat_env)
    assert bad_number.code == 2

    home = Path(invincat_env["INVINCAT_HOME"])
    [thread_dir] = (home / "checkpoints").glob(f"*/threads/{thread}")
    [manifest] = thread_dir.glob("*.json")
    data = json.loads(manifest.read_text())
    blob = data["files"]["written.txt"]["before"]["blob"]
    # A blob replaced by a link (planted in the store) costs that file only.
    blob_path = thread_dir.parent.parent / "objects" / blob[:2] / blob[2:]
    blob_path.unlink()
    blob_path.symlink_to(workspace / "third.txt")
    result = run_invincat(["rewind", thread, "--to", "1", "--yes", "--json"], invincat_env)
    plan, done = result.events
    [planted] = [f for f in plan["files"] if f["path"] == "written.txt"]
    assert "symbolic link" in planted["problem"]
    assert "unsafe" in done["failed"]["written.txt"]
    assert (workspace / "gone.txt").exists()  # the others were restored
    assert result.code == 1

    # A manifest that does not parse is named and left out.
    manifest.write_text('{"version": 1, "files": "nope"}')
    listing = run_invincat(["rewind", thread, "--json"], invincat_env)
    assert listing.code == 0
    [turns] = listing.events
    assert turns["turns"][0]["files"] == [] and "left out" in turns["problems"][0]


def test_checkpoints_go_with_their_thread(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=True)
    thread = thread_of(run_changing_turn(fake_openai, invincat_env, workspace))
    home = Path(invincat_env["INVINCAT_HOME"])
    [project] = (home / "checkpoints").iterdir()
    assert (project / "threads" / thread).is_dir()
    assert any((project / "objects").rglob("*"))
    for path in (project, project / "threads" / thread, *project.rglob("*")):
        wanted = 0o700 if path.is_dir() else 0o600
        assert path.stat().st_mode & 0o777 == wanted, path
    deleted = run_invincat(["threads", "delete", thread, "--yes"], invincat_env)
    assert deleted.code == 0, deleted.stderr
    assert not (project / "threads" / thread).exists()
    assert not [p for p in (project / "objects").rglob("*") if p.is_file()]


def test_files_gitignore_excludes_are_neither_kept_nor_restored(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=True)
    (workspace / ".git" / "info" / "exclude").write_text("*.log\n")
    (workspace / "build.log").write_text("secret build output\n")
    fake_openai.add_steps(
        [
            call("execute", command="echo more >> build.log && echo x >> third.txt"),
            {"content": "ok"},
        ]
    )
    chat = run_invincat(
        ["chat", "build", "--yes", "--json", "--cwd", str(workspace)],
        {**invincat_env, "INVINCAT_SANDBOX": "off"},
    )
    assert chat.code == 0, chat.stderr
    thread = thread_of(chat)
    result = run_invincat(["rewind", thread, "--to", "1", "--yes", "--json"], invincat_env)
    assert result.code == 0, result.stderr
    assert result.events[1]["restored"] == ["third.txt"]
    assert (workspace / "build.log").read_text() == "secret build output\nmore\n"
    home = Path(invincat_env["INVINCAT_HOME"])
    stored = b"".join(p.read_bytes() for p in (home / "checkpoints").rglob("*") if p.is_file())
    assert b"secret build output" not in stored
