"""Skills: discovery, listing to the model, loading on demand, precedence, bad files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException

from invincat_server.runtime.extensions.skills import discover_skills, make_load_skill
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.sessions import SessionFactory, run_turn
from tests.terminal.cli_process import run_invincat

BODY_MARKER = "STEP-ONE-FILL-THE-FORM-WITH-PDFTK"


def write_skill(root: Path, folder: str, front_matter: str, body: str = "") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front_matter}\n---\n{body}")
    return path


def _all_text(server: FakeOpenAIServer) -> list[str]:
    return [json.dumps(r["messages"]) for r in server.chat_requests()]


async def test_project_skill_is_listed_and_its_body_is_sent_only_after_load_skill(
    make_session: SessionFactory, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    skills = workspace / ".invincat" / "skills"
    write_skill(
        skills,
        "pdf-forms",
        "name: pdf-forms\ndescription: Fill in PDF forms with pdftk",
        f"# PDF forms\n{BODY_MARKER}\n",
    )
    (skills / "pdf-forms" / "scripts").mkdir()
    (skills / "pdf-forms" / "scripts" / "fill.py").write_text("print('fill')\n")
    fake_openai.add_steps(
        [
            {"match": {"last_user_contains": "hello"}, "content": "hi"},
            {
                "match": {"last_user_contains": "fill", "has_tool_result": False},
                "tool_calls": [{"name": "load_skill", "arguments": {"name": "pdf-forms"}}],
            },
            {"match": {"has_tool_result": True}, "content": "Following the skill."},
        ]
    )
    session = await make_session(auto_approve=False)
    thread_id, _ = await run_turn(session, "hello")
    first = fake_openai.chat_requests()[0]
    system = first["messages"][0]["content"]
    assert "- pdf-forms: Fill in PDF forms with pdftk" in system
    assert "load_skill" in {t["function"]["name"] for t in first["tools"]}
    assert not any(BODY_MARKER in text for text in _all_text(fake_openai))

    _, events = await run_turn(session, "fill the form", thread_id)
    # load_skill runs without asking: it only reads what the user installed.
    assert not [e for e in events if e.type == "approval_requested"]
    tool_message = fake_openai.chat_requests()[-1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert BODY_MARKER in tool_message["content"]
    assert "- scripts/fill.py" in tool_message["content"]
    assert "(in the project: .invincat/skills/pdf-forms)" in tool_message["content"]


async def test_user_skills_outside_the_workspace_load_and_win_over_project_duplicates(
    tmp_path: Path, invincat_home: Path, workspace: Path
) -> None:
    user = write_skill(
        invincat_home / "skills",
        "deploy",
        "name: deploy\ndescription: the user's deploy steps",
        "USER BODY\n",
    )
    (user.parent / "check.sh").write_text("echo user-check\n")
    project = write_skill(
        workspace / ".agents" / "skills",
        "deploy",
        "name: deploy\ndescription: the project's deploy steps",
        "PROJECT BODY\n",
    )
    write_skill(workspace / ".agents" / "skills", "lint", "name: lint\ndescription: run lint")

    scan = discover_skills(invincat_home, workspace)
    assert [(s.name, s.source) for s in scan.skills] == [
        ("deploy", "user"),
        ("lint", "project (.agents/skills)"),
    ]
    assert scan.skills[0].shadowed == (project,)

    tool = make_load_skill(scan, workspace)
    body = await tool.ainvoke({"name": "deploy"})
    assert "USER BODY" in body and "PROJECT BODY" not in body
    assert f"Folder: {user.parent}" in body and "- check.sh" in body
    assert await tool.ainvoke({"name": "deploy", "file": "check.sh"}) == "echo user-check\n"


async def test_load_skill_cannot_read_outside_the_skill_folder(
    invincat_home: Path, workspace: Path
) -> None:
    write_skill(invincat_home / "skills", "a", "name: a\ndescription: skill a")
    (invincat_home / "secret.txt").write_text("token")
    (invincat_home / "skills" / "a" / "link").symlink_to(invincat_home / "secret.txt")
    tool = make_load_skill(discover_skills(invincat_home, workspace), workspace)
    for bad in ("../../secret.txt", "link", str(invincat_home / "secret.txt")):
        with pytest.raises(ToolException, match="not a file inside the skill folder"):
            await tool.coroutine(name="a", file=bad)  # type: ignore[misc]
    with pytest.raises(ToolException, match=r"No skill named 'nope'\. Available skills: a\."):
        await tool.coroutine(name="nope")  # type: ignore[misc]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("no front matter at all\n", "does not start with a `---` front matter block"),
        ("---\nname: x\ndescription: y\n", "no closing `---` line"),
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nname: has space\ndescription: d\n---\n", "`name` must be"),
        ("---\nname: ok\n---\n", "`description` is missing or empty"),
    ],
)
def test_malformed_front_matter_is_skipped_with_a_reason(
    invincat_home: Path, workspace: Path, content: str, reason: str
) -> None:
    bad = workspace / ".invincat" / "skills" / "bad" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text(content)
    write_skill(workspace / ".invincat" / "skills", "good", "name: good\ndescription: fine")
    scan = discover_skills(invincat_home, workspace)
    assert [s.name for s in scan.skills] == ["good"]
    [problem] = scan.problems
    assert problem.startswith(f"Skill {bad} skipped: ") and reason in problem


async def test_a_malformed_skill_becomes_a_notice_and_the_session_still_works(
    make_session: SessionFactory, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    bad = workspace / ".invincat" / "skills" / "broken" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nname: [\n---\nbody")
    fake_openai.add_steps([{"content": "still here"}])
    session = await make_session()
    _, events = await run_turn(session, "hi")
    errors = [e.message for e in events if e.type == "error"]
    assert any(str(bad) in m and "not valid YAML" in m for m in errors)
    assert events[-1].status == "completed"
    request: dict[str, Any] = fake_openai.chat_requests()[0]
    assert "load_skill" not in {t["function"]["name"] for t in request["tools"]}
    assert "## Skills" not in request["messages"][0]["content"]


def test_skills_command_lists_skills_in_the_repl(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
) -> None:
    write_skill(invincat_home / "skills", "deploy", "name: deploy\ndescription: user deploy")
    write_skill(workspace / ".invincat" / "skills", "deploy", "name: deploy\ndescription: x")
    write_skill(workspace / ".invincat" / "skills", "review", "name: review\ndescription: PRs")
    (workspace / ".agents" / "skills" / "bad").mkdir(parents=True)
    (workspace / ".agents" / "skills" / "bad" / "SKILL.md").write_text("nothing")
    result = run_invincat(
        ["chat", "--json", "--cwd", str(workspace)], invincat_env, input="/skills\n/exit\n"
    )
    assert result.code == 0, result.stderr
    assert "deploy  [user] (shadows 1 more)  user deploy" in result.stderr
    assert "review  [project (.invincat/skills)]  PRs" in result.stderr
    assert "SKILL.md skipped: it does not start with a `---` front matter block" in result.stderr
    assert "/skills is not available" not in result.stderr
