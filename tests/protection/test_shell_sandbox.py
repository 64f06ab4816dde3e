"""Issue 23 item 2: `execute` runs in a bubblewrap sandbox, so even an approved command
cannot write outside the workspace, into `.git/`, read `$INVINCAT_HOME` or reach the
network; leaving the sandbox takes its own approval, which `--yes` never gives.

Each test performs the attack through the real `invincat chat` process and the scripted
fake model. The projects live under /var/tmp, not /tmp: the sandbox gives every command a
private /tmp, which would hide a victim folder under /tmp and prove nothing.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.protection.sandbox_chat import chat as _chat
from tests.protection.sandbox_chat import error_text as _errors
from tests.protection.sandbox_chat import execute_step as _execute
from tests.protection.sandbox_chat import tool_results as _results

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

SECRET = "sandbox-test-secret-7f3a"


@pytest.fixture
def outer() -> Iterator[Path]:
    """A folder outside /tmp holding the project, a victim beside it and Invincat's home."""
    folder = Path(tempfile.mkdtemp(prefix="invincat-sandbox-test-", dir="/var/tmp"))
    (folder / "project" / ".git").mkdir(parents=True)
    (folder / "victim").mkdir()
    (folder / "victim" / "precious.txt").write_text("keep me\n")
    (folder / "ih").mkdir()
    (folder / "ih" / "notes.txt").write_text(SECRET + "\n")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def project(outer: Path) -> Path:
    return outer / "project"


@pytest.fixture
def env(invincat_env: dict[str, str], outer: Path) -> dict[str, str]:
    return {**invincat_env, "INVINCAT_HOME": str(outer / "ih")}


def test_an_approved_rm_rf_outside_the_workspace_leaves_it_intact_and_says_why(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path, outer: Path
) -> None:
    fake_openai.add_steps([_execute("rm -rf ../victim"), {"content": "done"}])
    result = _chat(project, env, "--yes")
    assert (outer / "victim" / "precious.txt").read_text() == "keep me\n"
    [text] = _results(result)
    assert "Read-only file system" in text, text
    assert "unsandboxed: true" in text and "sandbox" in text, text


def test_the_sandbox_cannot_be_remounted_writable(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path, outer: Path
) -> None:
    # As root, bwrap keeps every capability unless told otherwise: CAP_SYS_ADMIN is enough
    # to remount / read-write and undo the whole sandbox.
    # Remount only where / is read-only (in the sandbox): run without it (to see this test
    # fail), the command must not touch the host's mounts.
    command = "[ -w / ] || mount -o remount,rw,bind / ; touch ../victim/pwned"
    fake_openai.add_steps([_execute(command), {"content": "done"}])
    _chat(project, env, "--yes")
    assert sorted(p.name for p in (outer / "victim").iterdir()) == ["precious.txt"]


def test_writes_inside_the_workspace_work_but_not_into_git(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps(
        [
            _execute("echo made > made.txt && mkdir -p sub && echo deep > sub/f && cat made.txt"),
            _execute("echo 'rm -rf ~' > .git/hooks-pre-commit"),
            {"content": "done"},
        ]
    )
    result = _chat(project, env, "--yes")
    made, git = _results(result)
    assert (project / "made.txt").read_text() == "made\n" and "[exit code: 0]" in made
    assert (project / "sub" / "f").read_text() == "deep\n"
    assert not (project / ".git" / "hooks-pre-commit").exists()
    assert "Read-only file system" in git and "unsandboxed: true" in git, git


def test_invincat_home_is_hidden_from_commands(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    # The path is put together at run time, so the command does not name the home (named,
    # or globbed, it is refused before running): the way around that textual check.
    command = "printf 'cat ../i%s/notes.txt' h > peek.sh && bash peek.sh"
    fake_openai.add_steps([_execute(command), {"content": "ok"}])
    result = _chat(project, env, "--yes")
    [text] = _results(result)
    assert SECRET not in text, text
    assert not [m for m in fake_openai.chat_requests()[-1]["messages"] if SECRET in str(m)]


def test_invincat_home_inside_the_workspace_is_hidden_too(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    home = project / "dot-config" / "invincat"
    home.mkdir(parents=True)
    (home / "notes.txt").write_text(SECRET + "\n")
    command = "printf 'cat dot-config/inv%s/notes.txt' incat > peek.sh && bash peek.sh"
    fake_openai.add_steps([_execute(command), {"content": "ok"}])
    result = _chat(project, {**env, "INVINCAT_HOME": str(home)}, "--yes")
    [text] = _results(result)
    assert SECRET not in text and "No such file" in text, text
    assert (home / "notes.txt").read_text() == SECRET + "\n"


def test_the_network_is_off_a_loopback_port_on_the_host_cannot_be_reached(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        server.setblocking(False)
        port = server.getsockname()[1]
        command = f"echo hello > /dev/tcp/127.0.0.1/{port} && echo CONNECTED"
        fake_openai.add_steps([_execute(command), {"content": "done"}])
        result = _chat(project, env, "--yes")
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing ever connected
    [text] = _results(result)
    assert "CONNECTED" not in text, text


def test_read_only_mode_writes_only_the_private_tmp(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps(
        [
            _execute("echo x > made.txt"),
            _execute("echo scratch > /tmp/s && cat /tmp/s && echo $TMPDIR"),
            {"content": "done"},
        ]
    )
    result = _chat(project, env, "--yes", INVINCAT_SANDBOX="read-only")
    refused, scratch = _results(result)
    assert not (project / "made.txt").exists()
    assert "Read-only file system" in refused, refused
    assert "scratch\n/tmp" in scratch and "[exit code: 0]" in scratch, scratch


def test_off_mode_runs_unconfined_as_before_and_says_so(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path, outer: Path
) -> None:
    fake_openai.add_steps([_execute("rm -rf ../victim"), {"content": "done"}])
    result = _chat(project, env, input="y\n", INVINCAT_SANDBOX="off")
    [asked] = result.of_type("approval_requested")
    assert "WITHOUT a sandbox (sandbox mode off)" in asked["description"], asked
    assert asked["always_options"] == []  # `rm` is never offered a rule, sandbox or not
    assert not (outer / "victim").exists()


def test_approvals_say_the_command_runs_in_the_sandbox(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps([_execute("echo hi"), {"content": "done"}])
    result = _chat(project, env, input="y\n")
    [asked] = result.of_type("approval_requested")
    assert asked["description"] == (
        "Run shell command: echo hi — in the sandbox (workspace-write, no network)"
    )


def test_unsandboxed_asks_separately_every_time_even_under_an_always_rule(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps(
        [
            _execute("touch a.txt"),
            _execute("touch b.txt"),
            _execute("touch c.txt", unsandboxed=True, reason="needs ~/.cache"),
            {"content": "done"},
        ]
    )
    # w: always allow `touch` here (covers b.txt); n: reject the unsandboxed call.
    result = _chat(project, env, input="w\nn\n\n")
    first, second = result.of_type("approval_requested")
    assert first["args"]["command"] == "touch a.txt"
    assert second["description"].startswith("Run WITHOUT the sandbox? Shell command: touch c.txt")
    assert "Reason given: needs ~/.cache" in second["description"]
    assert second["always_options"] == []
    assert (project / "b.txt").exists() and not (project / "c.txt").exists()


def test_unsandboxed_is_refused_under_yes_and_says_how_to_turn_the_sandbox_off(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path, outer: Path
) -> None:
    fake_openai.add_steps(
        [_execute("rm -rf ../victim", unsandboxed=True, reason="cleanup"), {"content": "ok"}]
    )
    result = _chat(project, env, "--yes")
    [text] = _results(result)
    assert text.startswith("Refused") and "INVINCAT_SANDBOX=off" in text, text
    assert (outer / "victim" / "precious.txt").exists()


def test_a_wrong_type_for_unsandboxed_never_runs_outside(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path, outer: Path
) -> None:
    fake_openai.add_steps([_execute("rm -rf ../victim", unsandboxed="true"), {"content": "ok"}])
    result = _chat(project, env, "--yes")
    [tool_result] = result.of_type("tool_result")
    assert tool_result["status"] == "error"
    assert (outer / "victim" / "precious.txt").exists()


def test_a_repository_cannot_turn_its_own_sandbox_off_unless_trusted(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path, outer: Path
) -> None:
    (project / ".invincat").mkdir()
    (project / ".invincat" / "config.toml").write_text('[sandbox]\nmode = "off"\nnetwork = true\n')
    fake_openai.add_steps([_execute("rm -rf ../victim"), {"content": "done"}])
    result = _chat(project, env, "--yes")
    assert (outer / "victim" / "precious.txt").exists()
    notice = _errors(result)
    assert "widen the shell sandbox" in notice and "not trusted" in notice, notice
    assert "--trust-project" in notice

    # Trusted by the user, the project's setting applies.
    fake_openai.add_steps([_execute("rm -rf ../victim"), {"content": "done"}])
    _chat(project, env, "--yes", "--trust-project")
    assert not (outer / "victim").exists()


def test_a_repository_may_narrow_its_sandbox_without_trust(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    (project / ".invincat").mkdir()
    (project / ".invincat" / "config.toml").write_text('[sandbox]\nmode = "read-only"\n')
    fake_openai.add_steps([_execute("echo x > made.txt"), {"content": "done"}])
    result = _chat(project, env, "--yes")
    assert not (project / "made.txt").exists()
    assert "widen" not in _errors(result)


def test_without_bwrap_every_command_asks_and_the_user_is_told(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps([_execute("touch a.txt"), _execute("touch b.txt"), {"content": "ok"}])
    # w: "always allow touch" - which must not cover the next, unconfined command.
    result = _chat(
        project,
        env,
        input="w\ny\ny\n",
        INVINCAT_BWRAP="/nonexistent/bwrap",
        INVINCAT_LANDLOCK="off",  # no fallback either (test_shell_sandbox_landlock.py)
    )
    asked = result.of_type("approval_requested")
    assert [a["args"]["command"] for a in asked] == ["touch a.txt", "touch b.txt"]
    assert "WITHOUT a sandbox (bwrap not found; Landlock turned off" in asked[1]["description"]
    assert "configured but unavailable" in _errors(result)
    assert (project / "b.txt").exists()


def test_the_agent_turning_the_sandbox_off_is_asked_with_the_change_named(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    (project / ".invincat").mkdir()
    (project / ".invincat" / "config.toml").write_text("[memory]\nextraction = false\n")
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {
                            "path": ".invincat/config.toml",
                            "content": '[sandbox]\nmode = "off"\n',
                        },
                    }
                ]
            },
            {"content": "done"},
        ]
    )
    result = _chat(project, env, input="n\n\n")
    [asked] = result.of_type("approval_requested")
    assert "changes the shell sandbox (mode '(unset)' → 'off'" in (asked["description"]), asked[
        "description"
    ]
