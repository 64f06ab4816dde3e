"""The warm chat server (the default for one-shot chat), end to end with the real
`invincat`: one-shot turns run in a worker forked by a per-user server that already
imported the stack, and

- a server never serves code older than what is installed (the version names the socket),
- a crashed server or worker never loses an approval (they live in threads.sqlite),
- no other user gets in (0600 socket, and SO_PEERCRED checked even if the mode is wrong).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import invincat_server
from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import (
    private_runtime_dir,
    stop_warm_servers,
    warm_log,
    warm_servers,
    warm_workers,
)
from tests.deadlines import DEADLINE, eventually
from tests.terminal.cli_process import INVINCAT, LiveInvincat, run_invincat


def write_step(name: str, content: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": name, "content": content}}]}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped) is not alive.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.fixture
def runtime() -> Iterator[Path]:
    """This test's own XDG_RUNTIME_DIR: its servers' sockets, locks and logs."""
    with private_runtime_dir() as directory:
        yield directory


@pytest.fixture
def warm_env(invincat_env: dict[str, str], runtime: Path) -> dict[str, str]:
    """The default environment (INVINCAT_WARM unset) with a runtime directory of its own."""
    env = {**invincat_env, "XDG_RUNTIME_DIR": str(runtime), "INVINCAT_WARM_IDLE": "120"}
    env.pop("INVINCAT_WARM", None)
    return env


@pytest.fixture
def cold_env(invincat_env: dict[str, str]) -> dict[str, str]:
    return {**invincat_env, "INVINCAT_WARM": "0"}


def test_one_shot_turns_run_in_one_warm_server_with_a_private_socket(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    for n in (1, 2):
        fake_openai.add_steps([write_step(f"f{n}.txt", f"{n}\n"), {"content": f"wrote {n}"}])
        done = run_invincat(
            ["chat", f"write {n}", "--yes", "--json", "--cwd", str(workspace)],
            warm_env,
            umask=0o022,  # the server starts with this one
        )
        assert done.code == 0, done.stderr
        assert done.of_type("turn_end")[-1]["status"] == "completed"
        assert (workspace / f"f{n}.txt").read_text() == f"{n}\n"
        assert done.stderr == "", done.stderr
    [(sock, pid)] = warm_servers(runtime).items()  # one server served both
    assert len(warm_workers(runtime)) == 2 and alive(pid)
    assert sock.parent == runtime / "invincat"
    assert os.stat(sock.parent).st_mode & 0o777 == 0o700
    assert os.stat(sock).st_mode & 0o777 == 0o600

    # Files are created with the client's umask, not the server's (started with 022 here).
    fake_openai.add_steps([write_step("private.txt", "p\n"), {"content": "wrote it"}])
    done = run_invincat(
        ["chat", "write it", "--yes", "--cwd", str(workspace)], warm_env, umask=0o077
    )
    assert done.code == 0, done.stderr
    assert len(warm_workers(runtime)) == 3  # the warm server ran it
    assert os.stat(workspace / "private.txt").st_mode & 0o777 == 0o600

    # Exit status and stderr come back as from a cold run (an unknown thread: usage error).
    done = run_invincat(["chat", "hi", "--thread", "t_nope", "--cwd", str(workspace)], warm_env)
    assert done.code == 2 and "unknown thread 't_nope'" in done.stderr

    os.kill(pid, signal.SIGTERM)  # `kill` stops the server and takes its socket away
    assert eventually(lambda: not alive(pid) and not sock.exists())


def test_a_server_never_serves_code_older_than_the_installed_code(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "first"}])
    assert run_invincat(["chat", "one", "--json", "--cwd", str(workspace)], warm_env).code == 0
    [(old_sock, old_pid)] = warm_servers(runtime).items()

    # The installed code changes (an upgrade, a checkout): a new file in the package.
    probe = Path(invincat_server.__file__).parent / f"_warm_probe_{uuid.uuid4().hex}.txt"
    probe.write_text("changed\n")
    try:
        fake_openai.add_steps([{"content": "second"}])
        done = run_invincat(["chat", "two", "--json", "--cwd", str(workspace)], warm_env)
        assert done.code == 0, done.stderr
        servers = warm_servers(runtime)
        assert len(servers) == 2, servers
        [new_sock] = set(servers) - {old_sock}
        # The old server served nothing more: the one worker after the change is the new one's.
        assert warm_log(runtime, new_sock).count("worker") == 1
        assert warm_log(runtime, old_sock).count("worker") == 1
        # ...and it leaves by itself, taking its socket with it.
        assert eventually(lambda: not alive(old_pid))
        assert not old_sock.exists()
    finally:
        probe.unlink()


def test_a_crashed_server_or_worker_loses_no_approval(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            write_step("a.txt", "A\n"),
            {"match": {"has_tool_result": True}, "content": "wrote a"},
            {"match": {"last_user_contains": "meanwhile"}, "content": "served"},
        ]
    )
    first = LiveInvincat(["chat", "write a", "--json", "--cwd", str(workspace)], warm_env)
    asked = first.wait_for("approval_requested")
    [server] = warm_servers(runtime).values()
    os.kill(server, signal.SIGKILL)  # the server crashes while its worker waits
    assert eventually(lambda: not alive(server))
    # Meanwhile another command is served by a new server: the waiting worker holds
    # neither the old socket nor the old server's lock.
    meanwhile = run_invincat(["chat", "meanwhile", "--json", "--cwd", str(workspace)], warm_env)
    assert meanwhile.code == 0 and meanwhile.stderr == "", meanwhile.stderr
    [replacement] = warm_servers(runtime).values()  # the same socket path, a new server
    assert replacement != server and alive(replacement)
    first.send("y\n")  # the worker is a process of its own: the user's answer still counts
    assert first.wait_for("turn_end")["status"] == "completed"
    assert first.finish() == 0, first.stderr
    assert (workspace / "a.txt").read_text() == "A\n"

    # Now the worker itself dies at an approval (like a crash): it stays pending on disk.
    fake_openai.add_steps([write_step("b.txt", "B\n"), {"content": "wrote b"}])
    second = LiveInvincat(["chat", "write b", "--json", "--cwd", str(workspace)], warm_env)
    asked = second.wait_for("approval_requested")
    worker = warm_workers(runtime)[-1]
    os.kill(worker, signal.SIGKILL)
    assert second.finish() == 1  # the client says its worker was lost
    assert "ended without an exit status" in second.stderr
    assert not (workspace / "b.txt").exists()

    resumed = run_invincat(
        ["chat", "--thread", asked["thread_id"], "--json", "--cwd", str(workspace)],
        warm_env,
        input="y\n",
    )
    assert resumed.code == 0, resumed.stderr
    [resolved] = resumed.of_type("approval_resolved")
    assert resolved["approval_id"] == asked["approval_id"]
    assert (workspace / "b.txt").read_text() == "B\n"


ATTACKER = r"""
import json, os, socket, struct, sys
path, workspace, base_url = sys.argv[1:4]
request = {
    "argv": ["chat", "write it", "--yes", "--json", "--cwd", workspace],
    "cwd": workspace,
    "env": {"INVINCAT_HOME": workspace + "/attacker-home", "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "k", "INVINCAT_MODEL": "fake-model",
            "INVINCAT_MEMORY_EXTRACTION": "off", "PATH": "/usr/bin:/bin"},
}
body = json.dumps(request).encode()
data = struct.pack(">I", len(body)) + body
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(path)
try:
    sent = socket.send_fds(conn, [data], [0, 1, 2])
    conn.sendall(data[sent:])
    reply = b""
    while chunk := conn.recv(4096):  # until the worker (if any) reports its exit
        reply += chunk
except (ConnectionResetError, BrokenPipeError):
    reply = b""
print("REPLY=" + repr(reply))
"""


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
def test_another_user_cannot_run_commands_through_the_server(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], workspace: Path
) -> None:
    # A home others can reach, so that only the server's own check stands in the way.
    shared = Path(tempfile.mkdtemp(prefix="invincat-warm-"))
    try:
        os.chmod(shared, 0o755)
        home, target = shared / "home", shared / "victim-project"
        (target / ".git").mkdir(parents=True)
        os.chmod(target, 0o777)
        env = {**warm_env, "INVINCAT_HOME": str(home), "XDG_RUNTIME_DIR": str(shared / "xdg")}
        fake_openai.add_steps([{"content": "warm"}])
        assert run_invincat(["chat", "hi", "--json", "--cwd", str(workspace)], env).code == 0
        runtime = shared / "xdg"
        [(sock, _pid)] = warm_servers(runtime).items()
        assert sock.parent == shared / "xdg" / "invincat"
        # The permission mistake: the socket's directory and the socket opened to everyone.
        for directory in (shared / "xdg", sock.parent):
            os.chmod(directory, 0o755)
        os.chmod(sock, 0o666)

        fake_openai.add_steps([write_step("pwned.txt", "owned\n"), {"content": "done"}])
        attack = subprocess.run(
            [
                "/usr/bin/python3",
                "-c",
                ATTACKER,
                str(sock),
                str(target),
                fake_openai.base_url,
            ],
            user=65534,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
        assert attack.returncode == 0, attack.stderr
        assert not (target / "pwned.txt").exists()
        assert "REPLY=b''" in attack.stdout  # closed without starting a worker
        assert "refused a connection from uid 65534" in warm_log(runtime, sock)
        assert len(fake_openai.pending_steps()) == 2  # the model was never even asked
    finally:
        stop_warm_servers(shared / "xdg")
        subprocess.run(["rm", "-rf", str(shared)], check=False)


def test_ctrl_c_reaches_the_worker_and_a_cancel_approves_nothing(
    fake_openai: FakeOpenAIServer,
    cold_env: dict[str, str],
    warm_env: dict[str, str],
    workspace: Path,
) -> None:
    """Ctrl-C goes to the client (the terminal's foreground process); it is relayed, and
    the worker cancels the turn exactly as a cold process does."""
    codes = []
    for env, name in ((cold_env, "cold.txt"), (warm_env, "warm.txt")):
        fake_openai.add_steps([write_step(name, "x\n")])
        live = LiveInvincat(["chat", f"write {name}", "--json", "--cwd", str(workspace)], env)
        live.wait_for("approval_requested")
        live.interrupt()
        live.wait_for("turn_end", status="cancelled")
        codes.append(live.finish())
        assert not (workspace / name).exists()
    assert codes[1] == codes[0], codes


def test_by_default_one_server_serves_every_home_of_the_user_and_0_turns_it_off(
    fake_openai: FakeOpenAIServer,
    warm_env: dict[str, str],
    cold_env: dict[str, str],
    runtime: Path,
    workspace: Path,
    tmp_path: Path,
) -> None:
    """INVINCAT_WARM unset: one-shot chats go to the warm server, one per user (not one per
    $INVINCAT_HOME, which would leave a resident process for every home); each command
    still uses its own home. INVINCAT_WARM=0: its own process."""
    homes = [tmp_path / "home-a", tmp_path / "home-b"]
    for n, home in enumerate(homes):
        fake_openai.add_steps([{"content": f"answer {n}"}])
        env = {**warm_env, "INVINCAT_HOME": str(home)}
        done = run_invincat(["chat", f"question {n}", "--json", "--cwd", str(workspace)], env)
        assert done.code == 0 and done.stderr == "", done.stderr
    assert len(warm_servers(runtime)) == 1 and len(warm_workers(runtime)) == 2
    for n, home in enumerate(homes):
        env = {**warm_env, "INVINCAT_HOME": str(home)}
        listed = run_invincat(["threads", "list", "--json"], env)
        assert [t["title"] for t in json.loads(listed.stdout)] == [f"question {n}"]

    fake_openai.add_steps([{"content": "cold answer"}])
    cold = {**cold_env, "XDG_RUNTIME_DIR": warm_env["XDG_RUNTIME_DIR"]}
    done = run_invincat(["chat", "cold", "--json", "--cwd", str(workspace)], cold)
    assert done.code == 0 and done.of_type("turn_end")[-1]["status"] == "completed"
    assert len(warm_workers(runtime)) == 2  # not served by the warm server


def test_the_worker_writes_the_bytes_a_cold_run_writes_in_the_clients_encoding(
    fake_openai: FakeOpenAIServer,
    warm_env: dict[str, str],
    cold_env: dict[str, str],
    runtime: Path,
    workspace: Path,
) -> None:
    """A client whose Python writes ASCII (PYTHONIOENCODING, a C locale without UTF-8 mode)
    gets the same bytes from a worker as from its own process, not UTF-8."""
    outputs = []
    for env in (cold_env, warm_env):
        fake_openai.add_steps([{"content": "café ✓"}])
        env = {**env, "PYTHONIOENCODING": "ascii:backslashreplace"}
        done = run_invincat(["chat", "accents", "--cwd", str(workspace)], env)
        assert done.code == 0, done.stderr
        outputs.append(done.stdout)
    assert len(warm_workers(runtime)) == 1  # the second run was the warm one
    assert "caf\\xe9" in outputs[0] and outputs[1] == outputs[0]


def test_a_stuck_server_costs_a_wait_not_a_hang_and_never_runs_the_command_twice(
    fake_openai: FakeOpenAIServer,
    warm_env: dict[str, str],
    runtime: Path,
    workspace: Path,
    tmp_path: Path,
) -> None:
    """A server that accepts but does not answer (stopped here) makes the client give up
    after INVINCAT_WARM_REPLY seconds and run the command cold; when the server wakes up,
    the worker it forks for that old connection finds the client gone and runs nothing."""
    fake_openai.add_steps([{"content": "warm"}])
    assert run_invincat(["chat", "start it", "--json", "--cwd", str(workspace)], warm_env).code == 0
    # On a loaded machine that first command may give up waiting and run cold while the
    # server it started is still importing: wait for it, and count its workers from here.
    assert eventually(lambda: warm_servers(runtime)), "no warm server started"
    [server] = warm_servers(runtime).values()
    before = len(warm_workers(runtime))
    os.kill(server, signal.SIGSTOP)
    try:
        fake_openai.add_steps([write_step("once.txt", "1\n"), {"content": "wrote it"}])
        env = {**warm_env, "INVINCAT_WARM_REPLY": "2"}
        # Output to files, not pipes: the descriptors sent to the stopped server stay open
        # in its socket until it wakes, so a pipe would not end when the client does.
        with (tmp_path / "out").open("w") as out, (tmp_path / "err").open("w") as err:
            client = subprocess.run(
                [INVINCAT, "chat", "write once", "--yes", "--json", "--cwd", str(workspace)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                timeout=DEADLINE,
                check=False,
            )
        assert client.returncode == 0, (tmp_path / "err").read_text()
        assert (workspace / "once.txt").read_text() == "1\n"
        requests = len(fake_openai.chat_requests())
    finally:
        os.kill(server, signal.SIGCONT)
    # The server now accepts the client's one connection (a server that did not answer is
    # not tried again) and forks a worker: it finds the client gone, and nothing runs.
    assert eventually(lambda: len(warm_workers(runtime)) == before + 1)
    late = warm_workers(runtime)[before:]
    assert eventually(lambda: not any(alive(pid) for pid in late))
    assert len(fake_openai.chat_requests()) == requests
    assert (workspace / "once.txt").read_text() == "1\n"
    fake_openai.add_steps([{"content": "still serving"}])
    after = run_invincat(["chat", "again", "--json", "--cwd", str(workspace)], warm_env)
    assert after.code == 0 and len(warm_workers(runtime)) == before + 2


def test_a_server_started_under_nohup_still_hangs_up_the_worker_of_a_dead_client(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    """`nohup` makes its command ignore SIGHUP, and a server started by such a client
    inherited that, and every worker it forked after: a client killed later (its editor
    gone) left its worker running for ever. And a client under `nohup` relayed the
    terminal's hang-up it was told to ignore, ending its run where a cold one lives on."""
    fake_openai.add_steps(
        [
            write_step("kept.txt", "K\n"),
            {"match": {"has_tool_result": True}, "content": "wrote it"},
        ]
    )
    kept = LiveInvincat(
        ["chat", "write kept", "--json", "--cwd", str(workspace)], warm_env, wrapper=("nohup",)
    )
    kept.wait_for("approval_requested")
    assert warm_servers(runtime), "the nohup'd client started the server"
    kept.proc.send_signal(signal.SIGHUP)  # its terminal hangs up: nohup says carry on
    kept.send("y\n")
    assert kept.wait_for("turn_end")["status"] == "completed"
    assert kept.finish() == 0, kept.stderr
    assert (workspace / "kept.txt").read_text() == "K\n"

    fake_openai.add_steps([write_step("gone.txt", "G\n")])
    gone = LiveInvincat(["chat", "write gone", "--json", "--cwd", str(workspace)], warm_env)
    gone.wait_for("approval_requested")
    worker = warm_workers(runtime)[-1]
    gone.kill()  # no word to the worker: its connection closes
    assert eventually(lambda: not alive(worker)), "the dead client's worker still runs"
    assert not (workspace / "gone.txt").exists()
