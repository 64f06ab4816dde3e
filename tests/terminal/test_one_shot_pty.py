"""A one-shot `invincat chat PROMPT` at a real terminal (pexpect pty), answered by a person:
by default it runs in the warm chat server's worker (docs/warm-server.md), which reads the
keys from the same terminal. Each case runs warm and cold (INVINCAT_WARM=0) and must end
the same: "n" writes nothing, "y" writes, Ctrl-C at the question cancels and writes
nothing."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pexpect
import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import warm_workers
from tests.deadlines import eventually
from tests.terminal.cli_process import INVINCAT
from tests.terminal.pty_terminal import DEADLINE, Terminal

MODES = {"warm": None, "cold": "0"}


def served_by_workers(env: dict[str, str]) -> int:
    """How many commands the session's warm servers have handed to a worker so far."""
    return len(warm_workers(Path(env["XDG_RUNTIME_DIR"])))


def one_shot(
    env: dict[str, str], mode: str, workspace: Path, *flags: str, prompt: str = "write w.txt please"
) -> Terminal:
    env = {k: v for k, v in env.items() if k != "INVINCAT_WARM"}
    if MODES[mode] is not None:
        env["INVINCAT_WARM"] = MODES[mode]
    return Terminal(["chat", prompt, *flags, "--cwd", str(workspace)], env)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize(("key", "written"), [("n", False), ("y", True), ("ctrl-c", False)])
def test_the_answer_typed_at_a_one_shot_approval_decides_it(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    mode: str,
    key: str,
    written: bool,
) -> None:
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "w.txt", "content": "W\n"}}
                ]
            },
            {"content": "Done here."},
        ]
    )
    before = served_by_workers(invincat_env)
    term = one_shot(invincat_env, mode, workspace)
    try:
        term.expect("Approval needed: Write file w.txt")
        term.expect("[y] approve")
        term.expect("> ")
        if key == "ctrl-c":
            term.ctrl_c()
            term.expect("(turn cancelled)")
        else:
            term.line(key)
            if key == "n":
                term.expect("Reason for the agent (optional):")
                term.line("")
            term.expect("Done here.")
        code = term.wait_exit()
    finally:
        term.close()
    assert (workspace / "w.txt").exists() is written, term.screen
    assert code == (130 if key == "ctrl-c" else 0), term.screen
    assert served_by_workers(invincat_env) - before == (1 if mode == "warm" else 0)


def process_state(pid: int) -> str | None:
    """The state letter in /proc/PID/stat (T when stopped); None once it has ended."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
    return None if state == "Z" else state


def worker_running(marker: str, runtime: Path) -> int | None:
    """The warm worker whose tool command is `marker`: an ancestor of that process. Not
    simply the newest worker in the logs: the runtime dir is shared with other tests, whose
    servers' logs may sort after this one's."""
    workers = set(warm_workers(runtime))
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker not in command:
            continue
        pid = int(entry.name)
        while pid > 1:
            if pid in workers:
                return pid
            try:
                pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                break
    return None


def test_ctrl_z_suspends_the_warm_worker_and_fg_resumes_it(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    """Ctrl-Z at an interactive shell while a one-shot turn runs stops the worker too (the
    terminal only reaches the client): nothing goes on behind the shell's back; `fg`
    continues it. (A shell with job control: without one, as for any process, the kernel
    discards terminal stop signals.)"""
    marker = f"sleep 600.{os.getpid()}"  # outlasts the test, this run's own; Ctrl-C ends it
    long_command = [{"tool_calls": [{"name": "execute", "arguments": {"command": marker}}]}]
    fake_openai.add_steps(long_command)
    runtime = Path(invincat_env["XDG_RUNTIME_DIR"])
    env = {k: v for k, v in invincat_env.items() if k != "INVINCAT_WARM"}
    shell = pexpect.spawn(
        "bash",
        ["--norc", "--noprofile", "-i"],
        env={**env, "PS1": "$ ", "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm-256color"},
        encoding="utf-8",
        timeout=DEADLINE,
        dimensions=(40, 200),
    )
    try:
        shell.expect_exact("$ ")
        command = [INVINCAT, "chat", "run the long command", "--yes", "--cwd", str(workspace)]
        shell.sendline(" ".join(shlex.quote(part) for part in command))
        assert eventually(lambda: worker_running(marker, runtime)), "the command never started"
        worker = worker_running(marker, runtime)
        shell.send("\x1a")  # Ctrl-Z
        shell.expect("Stopped")
        assert eventually(lambda: process_state(worker) == "T"), "the worker went on"
        shell.sendline("fg")
        assert eventually(lambda: process_state(worker) != "T"), "the worker stayed stopped"
        shell.sendintr()  # Ctrl-C: the turn ends, the shell is back
        shell.expect_exact("(turn cancelled)")
        shell.expect_exact("$ ")

        # Suspended again, then killed for good: the stopped worker cannot see its client
        # go, so the server hangs it up rather than leave it stopped for ever.
        fake_openai.add_steps(
            [{"tool_calls": [{"name": "execute", "arguments": {"command": marker}}]}]
        )
        shell.sendline(" ".join(shlex.quote(part) for part in command))
        assert eventually(lambda: worker_running(marker, runtime)), "the command never started"
        second = worker_running(marker, runtime)
        assert second != worker
        shell.send("\x1a")
        shell.expect("Stopped")
        assert eventually(lambda: process_state(second) == "T"), "the worker went on"
        shell.sendline("kill -9 %1")
        assert eventually(lambda: process_state(second) is None), "the worker stayed stopped"
    finally:
        shell.close(force=True)
