"""A plan's execution is checkpointed under its handoff turn, so it rewinds like any."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.rewind.scenario import call, make_project, tree
from tests.terminal.cli_process import run_invincat

PLAN = [{"content": "Rewrite written.txt", "status": "pending"}]


def test_the_files_a_plan_changed_are_rewound(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    make_project(workspace, git=False)
    before = tree(workspace)
    fake_openai.add_steps(
        [
            call("write_todos", todos=PLAN),
            call("approve_plan", todos=PLAN),
            call("write_file", path="written.txt", content="planned\n"),
            {"content": "Done as planned."},
        ]
    )
    chat = run_invincat(
        ["chat", "--plan", "rewrite it", "--yes", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="y\n",  # the plan itself is asked about even with --yes
    )
    assert chat.code == 0, chat.stderr
    assert (workspace / "written.txt").read_text() == "planned\n"
    thread = chat.of_type("turn_start")[0]["thread_id"]
    listing = run_invincat(["rewind", thread, "--json"], invincat_env)
    [turn] = listing.events[0]["turns"]
    assert turn["files"] == ["written.txt"]
    result = run_invincat(["rewind", thread, "--to", "1", "--yes", "--json"], invincat_env)
    assert result.code == 0, result.stderr
    assert tree(workspace) == before
