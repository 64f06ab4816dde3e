"""Plan mode through the real CLI: read-only planner, plan approval, refine, handoff."""

from __future__ import annotations

import json
from pathlib import Path

from invincat_server.runtime.agents.planner import PLANNER_TOOLS
from invincat_server.runtime.plan_flow import DRIFT_GIVE_UP
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import LiveInvincat, run_invincat

PLAN_A = [{"content": "Create hello.txt with a greeting"}, {"content": "Report back"}]
PLAN_B = [{"content": "Create greeting.md instead"}, {"content": "Report back"}]


def _call(name: str, **args: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _todos(*statuses: str, plan: list[dict] = PLAN_A) -> dict:
    items = [{**item, "status": status} for item, status in zip(plan, statuses, strict=True)]
    return _call("write_todos", todos=items)


def _plan_steps(plan: list[dict] = PLAN_A) -> list[dict]:
    return [_call("write_todos", todos=plan), _call("approve_plan", todos=plan)]


def _execution_steps() -> list[dict]:
    return [
        _todos("in_progress", "pending"),
        _call("write_file", path="hello.txt", content="hello\n"),
        _todos("completed", "in_progress"),
        _todos("completed", "completed"),
        {"content": "Created hello.txt."},
    ]


def test_plan_then_approve_then_the_main_agent_executes_it(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "app.py").write_text("print('hi')\n")
    fake_openai.add_steps([_call("read_file", path="app.py"), *_plan_steps(), *_execution_steps()])
    cli = LiveInvincat(
        ["chat", "--plan", "add a greeting file", "--json", "--cwd", str(workspace)], invincat_env
    )
    asked = cli.wait_for("approval_requested", kind="plan")
    assert [t["content"] for t in asked["todos"]] == [t["content"] for t in PLAN_A]
    assert not (workspace / "hello.txt").exists()  # nothing changes before approval
    cli.send("y\n")
    cli.wait_for("approval_requested", kind="tool")  # the write itself still asks
    assert not (workspace / "hello.txt").exists()
    cli.send("y\n")
    end = cli.wait_for("turn_end")
    assert end["status"] == "completed"
    assert cli.finish() == 0
    assert (workspace / "hello.txt").read_text() == "hello\n"

    todo_events = [e["items"] for e in cli.seen if e["type"] == "todos"]
    first_item = [items[0]["status"] for items in todo_events]
    assert first_item[0] == "pending"  # the plan as written
    assert first_item.index("in_progress") < first_item.index("completed")
    assert [i["status"] for i in todo_events[-1]] == ["completed", "completed"]

    handoff = fake_openai.chat_requests()[len(_plan_steps()) + 1]["messages"]
    text = handoff[-1]["content"]
    assert "add a greeting file" in text and "1. Create hello.txt with a greeting" in text


def test_planner_cannot_write_execute_or_call_other_tools(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "app.py").write_text("print('hi')\n")
    forbidden = {
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}},
            {
                "name": "edit_file",
                "arguments": {"path": "app.py", "old_string": "hi", "new_string": "yo"},
            },
            {"name": "execute", "arguments": {"command": "touch pwned.txt"}},
            {"name": "github__create_issue", "arguments": {"title": "t"}},
        ]
    }
    fake_openai.add_steps([forbidden, *_plan_steps()])
    result = run_invincat(
        ["chat", "--plan", "do it", "--json", "--cwd", str(workspace)], invincat_env, input="n\n\n"
    )
    assert result.code == 0, result.stderr
    refused = [
        e for e in result.of_type("tool_result") if "not available in plan mode" in e["content"]
    ]
    assert sorted(e["name"] for e in refused) == sorted(
        ["write_file", "edit_file", "execute", "github__create_issue"]
    )
    assert all(", ".join(("read_file", "ls", "glob", "grep")) in e["content"] for e in refused)
    assert [e["kind"] for e in result.of_type("approval_requested")] == ["plan"]  # no tool prompt
    assert sorted(p.name for p in workspace.iterdir()) == [".git", "app.py"]
    assert (workspace / "app.py").read_text() == "print('hi')\n"
    for request in fake_openai.chat_requests():
        names = {t["function"]["name"] for t in request.get("tools", [])}
        assert names <= set(PLANNER_TOOLS), names
    # rejected: the main agent never ran
    assert len(fake_openai.chat_requests()) == 3


def test_refine_produces_a_second_plan_and_execution_follows_it(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([*_plan_steps(PLAN_A), *_plan_steps(PLAN_B), {"content": "Done with B."}])
    result = run_invincat(
        ["chat", "--plan", "greet", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="r\nuse a markdown file called greeting.md\ny\n",
    )
    assert result.code == 0, result.stderr
    plans = [e["todos"] for e in result.of_type("approval_requested")]
    assert [[t["content"] for t in p] for p in plans] == [
        [t["content"] for t in PLAN_A],
        [t["content"] for t in PLAN_B],
    ]
    requests = fake_openai.chat_requests()
    feedback_request = json.dumps(requests[2]["messages"])
    assert "use a markdown file called greeting.md" in feedback_request
    assert "Create hello.txt with a greeting" in feedback_request  # the plan that was refused
    handoff = requests[-1]["messages"][-1]["content"]
    assert "1. Create greeting.md instead" in handoff
    assert "use a markdown file called greeting.md" in handoff
    assert "Create hello.txt" not in handoff


def test_plan_pending_across_a_restart_is_resolvable(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([*_plan_steps(), {"content": "Executed after restart."}])
    first = LiveInvincat(
        ["chat", "--plan", "greet", "--json", "--cwd", str(workspace)], invincat_env
    )
    asked = first.wait_for("approval_requested", kind="plan")
    first.kill()
    second = run_invincat(
        ["chat", "--thread", asked["thread_id"], "--json", "--cwd", str(workspace)],
        invincat_env,
        input="y\n",
    )
    assert second.code == 0, second.stderr
    assert second.of_type("turn_end")[-1]["status"] == "completed"
    deltas = "".join(e["text"] for e in second.of_type("message_delta"))
    assert "Executed after restart." in deltas


def test_a_planner_that_drifts_is_nudged_once_then_the_user_is_told(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [{"content": "Here is the code: print('x')"}, {"content": "Still no plan."}]
    )
    result = run_invincat(
        ["chat", "--plan", "do it", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert result.code == 1
    assert [e["message"] for e in result.of_type("error")] == [DRIFT_GIVE_UP]
    first, nudged = fake_openai.chat_requests()
    assert '{"todos"' in nudged["messages"][-1]["content"]
    # The answer to the nudge is offered no tool and asked for the plan's JSON: a small
    # model offered its tools again echoed its context, offered approve_plan alone, prose.
    assert {t["function"]["name"] for t in first["tools"]} > {"approve_plan", "read_file"}
    assert "tools" not in nudged
    assert nudged["response_format"]["type"] == "json_schema"


def test_drift_then_a_proper_plan_is_accepted(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "I'd just do it."}, *_plan_steps(), {"content": "Done."}])
    result = run_invincat(
        ["chat", "--plan", "do it", "--json", "--cwd", str(workspace)], invincat_env, input="y\n"
    )
    assert result.code == 0, result.stderr
    assert result.of_type("error") == []


def test_a_plan_answered_as_json_to_the_nudge_is_asked_about_and_executed(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    plan = {"todos": [{"content": "Write notes.txt saying hi", "status": "pending"}]}
    write = {"path": "notes.txt", "content": "hi\n"}
    fake_openai.add_steps(
        [
            {"content": "Here is how you could do it: ..."},
            {"content": json.dumps(plan)},
            {"tool_calls": [{"name": "write_file", "arguments": write}]},
            {"content": "Done.", "match": {"has_tool_result": True}},
        ]
    )
    result = run_invincat(
        ["chat", "--plan", "write notes", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="y\ny\n",
    )
    assert result.code == 0, result.stderr
    assert result.of_type("error") == []
    # The plan is asked about as any plan, then its write as any write.
    asked = result.of_type("approval_requested")
    assert [a["kind"] for a in asked] == ["plan", "tool"]
    assert (workspace / "notes.txt").read_text() == "hi\n"


def test_a_refused_plan_from_the_nudge_runs_nothing(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    plan = {"todos": [{"content": "Delete everything", "status": "pending"}]}
    fake_openai.add_steps([{"content": "I'd just do it."}, {"content": json.dumps(plan)}])
    result = run_invincat(
        ["chat", "--plan", "clean up", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="n\nno\n",
    )
    [asked] = result.of_type("approval_requested")
    assert asked["kind"] == "plan"
    assert result.of_type("tool_call")[-1]["name"] == "approve_plan"
    assert len(fake_openai.chat_requests()) == 2  # nothing was executed after the refusal


def test_ask_user_from_the_planner_reaches_the_next_planner_request(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    question = {"question": "Which file name?", "options": ["hello.txt", "greeting.md"]}
    fake_openai.add_steps(
        [_call("ask_user", questions=[question]), *_plan_steps(), {"content": "ok"}]
    )
    result = run_invincat(
        ["chat", "--plan", "greet", "--json", "--cwd", str(workspace)], invincat_env, input="2\ny\n"
    )
    assert result.code == 0, result.stderr
    [asked] = [e for e in result.of_type("approval_requested") if e["kind"] == "question"]
    assert asked["questions"] == [question]
    tool_message = [m for m in fake_openai.chat_requests()[1]["messages"] if m["role"] == "tool"][
        -1
    ]
    assert (
        "Which file name?" in tool_message["content"]
        and "A: greeting.md" in tool_message["content"]
    )


def test_headless_yes_answers_questions_and_approves_the_plan(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    question = {"question": "Which file name?"}
    fake_openai.add_steps(
        [_call("ask_user", questions=[question]), *_plan_steps(), {"content": "ok"}]
    )
    result = run_invincat(
        ["chat", "--plan", "greet", "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert result.code == 0, result.stderr
    assert result.of_type("approval_requested") == []
    tool_message = [m for m in fake_openai.chat_requests()[1]["messages"] if m["role"] == "tool"][
        -1
    ]
    assert "(no answer: headless)" in tool_message["content"]
    assert "Approved plan" in fake_openai.chat_requests()[-1]["messages"][-1]["content"]


def test_approve_plan_alone_is_the_plan_and_write_todos_names_the_next_step(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # Small models skip write_todos or reword the list: the list shown for approval is the
    # plan, and it is the plan the main agent gets.
    fake_openai.add_steps([_call("approve_plan", todos=PLAN_A), *_execution_steps()])
    cli = LiveInvincat(
        ["chat", "--plan", "add a greeting file", "--json", "--cwd", str(workspace)], invincat_env
    )
    asked = cli.wait_for("approval_requested", kind="plan")
    assert [t["content"] for t in asked["todos"]] == [t["content"] for t in PLAN_A]
    cli.send("y\n")
    cli.wait_for("approval_requested", kind="tool")
    cli.send("y\n")
    assert cli.wait_for("turn_end")["status"] == "completed"
    assert cli.finish() == 0
    assert (workspace / "hello.txt").read_text() == "hello\n"
    todo_events = [e["items"] for e in cli.seen if e["type"] == "todos"]
    assert [t["content"] for t in todo_events[0]] == [t["content"] for t in PLAN_A]
    handoff = fake_openai.chat_requests()[1]["messages"][-1]["content"]
    assert "1. Create hello.txt with a greeting" in handoff
    # The planner proposes with approve_plan: it is not offered write_todos to loop on.
    planner = [t["function"]["name"] for t in fake_openai.chat_requests()[0]["tools"]]
    assert "approve_plan" in planner and "write_todos" not in planner
    main = [t["function"]["name"] for t in fake_openai.chat_requests()[1]["tools"]]
    assert "write_todos" in main
    results = [m for m in fake_openai.chat_requests()[2]["messages"] if m["role"] == "tool"]
    assert "Now do this step with the other tools: Create hello.txt" in results[-1]["content"]


def test_a_plan_proposed_with_a_step_marked_done_is_approved_with_every_step_pending(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """Qwen2.5-Coder-1.5B proposed its one step as `completed` and the executor, told the
    plan was done, did nothing (bench run 17)."""
    done = [{"content": "Write hello.txt", "status": "completed"}]
    fake_openai.add_steps([_call("approve_plan", todos=done), {"content": "Nothing to do."}])
    result = run_invincat(
        ["chat", "--plan", "write hello", "--json", "--cwd", str(workspace)],
        invincat_env,
        input="y\n",
    )
    assert result.code == 0, result.stderr
    [asked] = result.of_type("approval_requested")
    assert [t["status"] for t in asked["todos"]] == ["pending"]
    handoff = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert "Approved plan:" in handoff and "Write hello.txt" in handoff


def test_a_step_marked_completed_before_anything_changed_is_told_it_is_not_done(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """Qwen2.5-Coder-1.5B marked its one approved step completed with nothing written, was
    told "Every item is completed: answer the user", and the turn ended with no change
    (bench runs 26-27)."""
    one = [{"content": "Create hello.txt with a greeting"}]
    fake_openai.add_steps(
        [
            _call("approve_plan", todos=one),
            _todos("completed", plan=one),  # nothing done yet
            _call("write_file", path="hello.txt", content="hello\n"),
            _todos("completed", plan=one),  # the same list again, now after the write
            {"content": "Created hello.txt."},
        ]
    )
    result = run_invincat(
        ["chat", "--plan", "greet", "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert result.code == 0, result.stderr
    assert (workspace / "hello.txt").read_text() == "hello\n"
    said = [r["content"] for r in result.of_type("tool_result") if r["name"] == "write_todos"]
    assert "No file has been changed and no command run in this turn yet" in said[0]
    assert "Every item is completed" not in said[0]
    assert said[1].endswith("Every item is completed: answer the user.")


def test_the_executor_is_handed_the_planners_last_answer_in_words(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """Bench runs 27-28: Qwen2.5-Coder-1.5B wrote the right code while planning, planned one
    vague step, and the executor, handed only that step, wrote code that does not run."""
    worked_out = "Add `parser.add_argument('--verbose', action='store_true')` after line 3."
    fake_openai.add_steps(
        [
            {"content": worked_out},  # drifts: its answer in words, no plan
            _call("approve_plan", todos=[{"content": "Add the --verbose flag"}]),
            {"content": "Done."},
        ]
    )
    result = run_invincat(
        ["chat", "--plan", "add --verbose", "--yes", "--json", "--cwd", str(workspace)],
        invincat_env,
    )
    assert result.code == 0, result.stderr
    handoff = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert "1. Add the --verbose flag" in handoff
    assert "The planner's notes, its own words while planning" in handoff
    assert worked_out in handoff


def test_a_later_plan_in_the_thread_is_not_handed_an_earlier_plans_notes(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """The planner's checkpoint keeps every planning of the thread: the notes handed over
    are this plan's words only, never a conclusion reached for another request."""
    fake_openai.add_steps(
        [
            {"content": "Old finding: use tabs in cli.py."},
            _call("approve_plan", todos=[{"content": "First change"}]),
            {"content": "Done."},
        ]
    )
    first = run_invincat(
        ["chat", "--plan", "first", "--yes", "--json", "--cwd", str(workspace)], invincat_env
    )
    assert first.code == 0, first.stderr
    assert "Old finding" in fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    thread = first.of_type("turn_start")[0]["thread_id"]
    fake_openai.add_steps(
        [_call("approve_plan", todos=[{"content": "Second change"}]), {"content": "Done."}]
    )
    second = run_invincat(
        [
            "chat",
            "--plan",
            "second",
            "--thread",
            thread,
            "--yes",
            "--json",
            "--cwd",
            str(workspace),
        ],
        invincat_env,
    )
    assert second.code == 0, second.stderr
    handoff = fake_openai.chat_requests()[-1]["messages"][-1]["content"]
    assert "1. Second change" in handoff
    assert "Old finding" not in handoff and "planner's notes" not in handoff
