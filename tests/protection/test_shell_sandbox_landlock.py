"""Issue 23: where bwrap cannot run (here: `INVINCAT_BWRAP` points at nothing), `execute`
falls back to Landlock, so an approved command still cannot write outside the workspace,
into `.git/`, read `$INVINCAT_HOME` or connect to a TCP port.

Each test performs the attack through the real `invincat chat` process and the scripted
fake model. The projects live under /var/tmp, as in test_shell_sandbox.py.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from invincat_server.runtime.sandbox.landlock import abi_version
from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import FAKE_API_KEY
from tests.protection.sandbox_chat import chat as _chat
from tests.protection.sandbox_chat import error_text as _errors
from tests.protection.sandbox_chat import execute_step as _execute
from tests.protection.sandbox_chat import tool_results as _results

pytestmark = pytest.mark.skipif(abi_version() < 1, reason="no Landlock in this kernel")

SECRET = "landlock-test-secret-91c2"


@pytest.fixture
def outer() -> Iterator[Path]:
    """A folder outside /tmp holding the project, a victim beside it and Invincat's home."""
    folder = Path(tempfile.mkdtemp(prefix="invincat-landlock-test-", dir="/var/tmp"))
    (folder / "project" / ".git").mkdir(parents=True)
    (folder / "project" / ".git" / "config").write_text("[core]\n")
    (folder / "project" / "src").mkdir()
    (folder / "project" / ".invincat").mkdir()
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
    return {**invincat_env, "INVINCAT_HOME": str(outer / "ih"), "INVINCAT_BWRAP": "/nonexistent"}


def test_an_approved_rm_rf_outside_the_workspace_leaves_it_intact(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path, outer: Path
) -> None:
    fake_openai.add_steps([_execute("rm -rf ../victim"), {"content": "done"}])
    result = _chat(project, env, "--yes")
    assert (outer / "victim" / "precious.txt").read_text() == "keep me\n"
    [text] = _results(result)
    assert "Permission denied" in text and "unsandboxed: true" in text, text
    notice = _errors(result)
    assert "uses Landlock" in notice and "bwrap not found" in notice, notice


def test_writes_inside_the_workspace_work_but_not_into_git(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps(
        [
            _execute("echo made > src/made.txt && mkdir -p src/sub && echo deep > src/sub/f"),
            _execute("echo '[core] fsmonitor = evil' >> .git/config"),
            _execute("echo 'rm -rf ~' > .git/hooks-pre-commit"),
            _execute("echo top > top.txt"),
            _execute("mkdir -p .invincat/x; echo '[sandbox]' > .invincat/config.toml"),
            {"content": "done"},
        ]
    )
    result = _chat(project, env, "--yes")
    made, config, hook, top, settings = _results(result)
    assert not (project / ".invincat" / "config.toml").exists(), settings
    assert not (project / ".invincat" / "x").exists(), settings
    # A right to create at the top would hold beneath .git too: documented, and the note
    # tells the model where to write instead.
    assert not (project / "top.txt").exists()
    assert "via Landlock" in top and "create them in a subfolder" in top, top
    assert "[exit code: 0]" in made, made
    assert (project / "src" / "made.txt").read_text() == "made\n"
    assert (project / "src" / "sub" / "f").read_text() == "deep\n"
    assert (project / ".git" / "config").read_text() == "[core]\n"
    assert not (project / ".git" / "hooks-pre-commit").exists()
    assert "Permission denied" in config and "Permission denied" in hook, (config, hook)


def test_a_file_in_invincat_home_is_not_readable(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    # Built at run time, so the textual check on commands does not refuse it first.
    command = "printf 'cat ../i%s/notes.txt' h > src/peek.sh && bash src/peek.sh"
    fake_openai.add_steps([_execute(command), {"content": "ok"}])
    result = _chat(project, env, "--yes")
    [text] = _results(result)
    assert SECRET not in text and "Permission denied" in text, text
    assert not [m for m in fake_openai.chat_requests()[-1]["messages"] if SECRET in str(m)]


@pytest.mark.skipif(abi_version() < 4, reason="Landlock confines TCP from ABI 4")
def test_a_loopback_port_opened_by_the_test_cannot_be_reached(
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


def test_the_servers_environment_and_process_are_out_of_reach(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    # Without a pid namespace the command sees the server's process: its environment holds
    # the API key the command's own environment is cleaned of, and a signal could stop it.
    command = "tr '\\0' '\\n' < /proc/$PPID/environ; kill -STOP $PPID; echo after"
    fake_openai.add_steps([_execute(command), {"content": "done"}])
    result = _chat(project, env, "--yes")
    [text] = _results(result)
    assert FAKE_API_KEY not in text and "Permission denied" in text, text
    assert not [m for m in fake_openai.chat_requests()[-1]["messages"] if FAKE_API_KEY in str(m)]


def test_read_only_mode_writes_only_the_private_tmp(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps(
        [
            _execute("echo x > src/made.txt"),
            _execute('echo scratch > "$TMPDIR/s" && cat "$TMPDIR/s" && echo "$TMPDIR"'),
            {"content": "done"},
        ]
    )
    result = _chat(project, env, "--yes", INVINCAT_SANDBOX="read-only")
    refused, scratch = _results(result)
    assert not (project / "src" / "made.txt").exists()
    assert "Permission denied" in refused, refused
    assert "scratch\n/" in scratch and "invincat-sandbox-" in scratch, scratch
    assert "[exit code: 0]" in scratch, scratch


def test_approvals_say_the_command_runs_under_landlock_and_rules_apply(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps([_execute("touch src/a"), _execute("touch src/b"), {"content": "ok"}])
    # w: "always allow touch" - confined, so the rule covers the second command.
    result = _chat(project, env, input="w\n")
    [asked] = result.of_type("approval_requested")
    assert asked["description"] == (
        "Run shell command: touch src/a — in the sandbox (workspace-write via Landlock, "
        + (
            "no network)"
            if abi_version() >= 4
            else f"network NOT confined (Landlock ABI {abi_version()}))"
        )
    )
    assert asked["always_options"]
    assert (project / "src" / "b").exists()


def test_with_landlock_off_too_every_command_asks_unconfined(
    fake_openai: FakeOpenAIServer, env: dict[str, str], project: Path
) -> None:
    fake_openai.add_steps([_execute("touch a.txt"), {"content": "ok"}])
    result = _chat(project, env, input="y\n", INVINCAT_LANDLOCK="off")
    [asked] = result.of_type("approval_requested")
    assert "WITHOUT a sandbox (bwrap not found; Landlock turned off" in asked["description"]
    assert asked["always_options"] == []
    assert (project / "a.txt").exists()
