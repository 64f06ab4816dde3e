"""A project and a scripted turn that changes it every way a turn can: write_file,
edit_file, and one `execute` that runs `sed -i` and `rm` and creates a file."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import Result, run_invincat

COMMAND = "sed -i 's/three/THREE/' third.txt && rm gone.txt && printf 'new\\n' > fourth.txt"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def make_project(root: Path, *, git: bool) -> None:
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "written.txt").write_bytes(b"old content\r\nwith CRLF\r\n")
    (root / "src" / "edited.py").write_text("def f():\n    return 1\n")
    (root / "third.txt").write_text("one\ntwo\nthree\n")
    (root / "gone.txt").write_bytes(b"\x00binary\xffbytes")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(root / "run.sh", 0o750)
    os.chmod(root / "third.txt", 0o640)
    if git:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        }
        for argv in (
            ["git", "init", "-q"],
            ["git", "add", "."],
            ["git", "commit", "-qm", "base"],
        ):
            subprocess.run(argv, cwd=root, env=env, check=True)
        # A stash, and a staged change: neither may move.
        (root / "run.sh").write_text("#!/bin/sh\necho stashed\n")
        subprocess.run(["git", "stash", "-q"], cwd=root, env=env, check=True)
        (root / "third.txt").write_text("one\ntwo\nthree\nstaged\n")
        subprocess.run(["git", "add", "third.txt"], cwd=root, env=env, check=True)


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file outside .git and .invincat: (bytes, mode)."""
    found: dict[str, tuple[bytes, int]] = {}
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".invincat")]
        for name in files:
            path = Path(top) / name
            found[str(path.relative_to(root))] = (path.read_bytes(), path.stat().st_mode & 0o7777)
    return found


def git_state(root: Path) -> tuple[str, bytes, str]:
    def out(*argv: str) -> str:
        return subprocess.run(
            ["git", *argv], cwd=root, capture_output=True, text=True, check=True
        ).stdout

    return out("rev-parse", "--all"), (root / ".git" / "index").read_bytes(), out("stash", "list")


def run_changing_turn(fake_openai: FakeOpenAIServer, env: dict[str, str], root: Path) -> Result:
    fake_openai.add_steps(
        [
            call("write_file", path="written.txt", content="brand new\n"),
            call("edit_file", path="src/edited.py", old_string="return 1", new_string="return 2"),
            call("execute", command=COMMAND),
            {"content": "All changed."},
        ]
    )
    # Unsandboxed: under the Landlock fallback `sed -i` cannot create its temp file at
    # the top of a workspace holding .git (docs/security.md); the sandbox is not tested here.
    env = {**env, "INVINCAT_SANDBOX": "off"}
    result = run_invincat(["chat", "change everything", "--yes", "--json", "--cwd", str(root)], env)
    assert result.code == 0, result.stderr
    assert [e["status"] for e in result.of_type("tool_result")] == ["success"] * 3, result.stdout
    assert "[exit code: 0]" in result.of_type("tool_result")[2]["content"]
    return result


def thread_of(result: Result) -> str:
    return str(result.of_type("turn_start")[0]["thread_id"])
