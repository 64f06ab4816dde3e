"""The warm server as the user sees it (docs/warm-server.md, "Seeing and stopping it"):
`invincat server status|stop` with the real processes, process titles in `ps`, a server
that never keeps the client's directory, and the one line saying that a chat started it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import (
    private_runtime_dir,
    stop_warm_servers,
    warm_log,
    warm_servers,
)
from tests.deadlines import DEADLINE, eventually
from tests.terminal.cli_process import INVINCAT, LiveInvincat, run_invincat


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def title(pid: int) -> str:
    """What `ps -o args` shows for `pid`."""
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()


def write_step(name: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": name, "content": "x\n"}}]}


@pytest.fixture
def runtime() -> Iterator[Path]:
    with private_runtime_dir() as directory:
        yield directory


@pytest.fixture
def warm_env(invincat_env: dict[str, str], runtime: Path) -> dict[str, str]:
    env = {**invincat_env, "XDG_RUNTIME_DIR": str(runtime), "INVINCAT_WARM_IDLE": "300"}
    env.pop("INVINCAT_WARM", None)
    return env


def status(env: dict[str, str]) -> tuple[int, list[dict[str, object]]]:
    done = run_invincat(["server", "status", "--json"], env)
    return done.code, json.loads(done.stdout)["servers"]


def test_status_shows_the_server_and_stop_ends_it(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, tmp_path: Path
) -> None:
    none = run_invincat(["server", "status"], warm_env)
    assert (none.code, none.stdout.strip()) == (1, "no warm server is running")
    assert status(warm_env) == (1, [])

    # A chat started in a temporary folder (no project marker) starts the server.
    folder = tmp_path / "scratch"
    folder.mkdir()
    fake_openai.add_steps([{"content": "hi"}])
    chat = subprocess.run(
        [INVINCAT, "chat", "hi", "--json"], env=warm_env, cwd=folder, timeout=DEADLINE
    )
    assert chat.returncode == 0
    [(sock, pid)] = warm_servers(runtime).items()

    # The server never works in the client's directory (an umount of it must not fail).
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    assert title(pid) == "invincat: warm server"

    code, [server] = status(warm_env)
    assert code == 0
    assert server["pid"] == pid and server["socket"] == str(sock)
    assert server["log"] == str(sock.with_suffix(".log"))
    assert server["version"] == "0.1.0" and server["current"] is True
    assert sock.name == f"chat-{server['codeVersion']}.sock"
    assert server["workers"] == [] and float(server["uptimeSeconds"]) >= 0  # type: ignore[arg-type]
    shown = run_invincat(["server", "status"], warm_env)
    assert shown.code == 0
    assert f"warm server pid {pid}: Invincat 0.1.0" in shown.stdout
    assert f"log     {sock.with_suffix('.log')}" in shown.stdout
    assert "workers 0" in shown.stdout

    stopped = run_invincat(["server", "stop"], warm_env)
    assert stopped.code == 0, stopped.stderr
    assert f"stopped the warm server pid {pid}" in stopped.stdout
    assert not alive(pid) and not sock.exists()  # stop returns once it is gone
    assert run_invincat(["server", "stop"], warm_env).code == 0  # nothing to stop: fine
    assert status(warm_env) == (1, [])


def test_stop_refuses_while_a_chat_worker_runs_and_force_ends_it(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "warm"}])
    assert run_invincat(["chat", "hi", "--json", "--cwd", str(workspace)], warm_env).code == 0
    [(sock, pid)] = warm_servers(runtime).items()
    fake_openai.add_steps([write_step("f.txt"), {"content": "done"}])
    chat = LiveInvincat(["chat", "write", "--json", "--cwd", str(workspace)], warm_env)
    try:
        chat.wait_for("approval_requested")
        _code, [server] = status(warm_env)
        [worker] = server["workers"]  # type: ignore[misc]
        assert worker["serves"] == "chat" and worker["project"] == str(workspace)
        assert title(worker["pid"]) == f"invincat: chat worker (project {workspace})"

        refused = run_invincat(["server", "stop"], warm_env)
        assert refused.code == 1
        assert f"pid {worker['pid']}" in refused.stderr and "--force" in refused.stderr
        assert "nothing was stopped" in refused.stderr
        assert alive(pid) and alive(worker["pid"]) and sock.exists()

        forced = run_invincat(["server", "stop", "--force", "--json"], warm_env)
        assert forced.code == 0, forced.stderr
        report = json.loads(forced.stdout)
        assert report["refused"] == []
        [done] = report["stopped"]
        assert done["pid"] == pid and [w["pid"] for w in done["endedWorkers"]] == [worker["pid"]]
        assert not alive(pid) and not sock.exists()
        assert eventually(lambda: not alive(worker["pid"]))
        assert chat.finish() == 1  # its client says the worker ended; nothing was written
        assert not (workspace / "f.txt").exists()
    finally:
        if chat.proc.poll() is None:
            chat.kill()


def test_a_language_server_worker_is_listed_and_never_stopped_without_force(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "warm"}])
    assert run_invincat(["chat", "hi", "--json", "--cwd", str(workspace)], warm_env).code == 0
    [(_sock, pid)] = warm_servers(runtime).items()
    # An editor's window: `invincat --stdio` in the project, its stdin a pipe it keeps open.
    editor = subprocess.Popen(
        [INVINCAT, "--stdio"],
        env=warm_env,
        cwd=workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert eventually(lambda: status(warm_env)[1][0]["workers"])
        [worker] = status(warm_env)[1][0]["workers"]  # type: ignore[index]
        assert worker["serves"] == "stdio" and worker["project"] == str(workspace)
        expected = f"invincat: language server worker (project {workspace})"
        assert title(worker["pid"]) == expected
        shown = run_invincat(["server", "status"], warm_env).stdout
        assert "language server (--stdio)" in shown and str(workspace) in shown

        assert run_invincat(["server", "stop"], warm_env).code == 1
        assert alive(worker["pid"]) and editor.poll() is None  # the editor keeps its server

        assert editor.stdin is not None
        editor.stdin.close()  # the editor closes the window: its worker ends ...
        assert editor.wait(timeout=DEADLINE) == 0
        assert eventually(lambda: not status(warm_env)[1][0]["workers"])
        assert run_invincat(["server", "stop"], warm_env).code == 0  # ... and stop goes
        assert not alive(pid)
    finally:
        if editor.poll() is None:
            editor.kill()
        editor.wait(timeout=DEADLINE)


def test_a_worker_that_outlives_its_server_is_listed_and_stopped_only_with_force(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "warm"}])
    assert run_invincat(["chat", "hi", "--json", "--cwd", str(workspace)], warm_env).code == 0
    [(_sock, pid)] = warm_servers(runtime).items()
    fake_openai.add_steps([write_step("f.txt"), {"content": "done"}])
    chat = LiveInvincat(["chat", "write", "--json", "--cwd", str(workspace)], warm_env)
    try:
        chat.wait_for("approval_requested")
        [worker] = status(warm_env)[1][0]["workers"]  # type: ignore[misc]
        os.kill(pid, 9)  # the server dies; its worker waits at the approval
        assert eventually(lambda: not alive(pid))

        done = run_invincat(["server", "status", "--json"], warm_env)
        assert done.code == 1  # no server runs ...
        report = json.loads(done.stdout)
        assert report["servers"] == []
        [orphan] = report["orphanWorkers"]  # ... but its worker is still seen
        assert orphan["pid"] == worker["pid"] and orphan["serves"] == "chat"
        assert orphan["project"] == str(workspace)
        shown = run_invincat(["server", "status"], warm_env).stdout
        assert "workers whose warm server has ended: 1" in shown and str(workspace) in shown

        refused = run_invincat(["server", "stop"], warm_env)
        assert refused.code == 1 and "nothing was stopped" in refused.stderr
        assert f"pid {worker['pid']}" in refused.stderr
        assert alive(worker["pid"])

        forced = run_invincat(["server", "stop", "--force", "--json"], warm_env)
        assert forced.code == 0, forced.stderr
        [ended] = json.loads(forced.stdout)["orphanWorkers"]
        assert ended["pid"] == worker["pid"] and ended["ended"] is True
        assert not alive(worker["pid"])
        assert chat.finish() == 1 and not (workspace / "f.txt").exists()
        assert json.loads(run_invincat(["server", "status", "--json"], warm_env).stdout) == {
            "servers": [],
            "orphanWorkers": [],
        }
    finally:
        if chat.proc.poll() is None:
            chat.kill()


OLD_SERVER = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
print("listening", flush=True)
while True:  # an older server: a request without descriptors is closed unanswered
    s.accept()[0].close()
"""


def test_status_and_stop_cover_servers_of_every_code_version(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "one"}, {"content": "two"}])
    assert run_invincat(["chat", "a", "--json", "--cwd", str(workspace)], warm_env).code == 0
    # Other PYTHON* settings are another code version, with a server of its own.
    other = {**warm_env, "PYTHON_INVINCAT_TEST": "another version"}
    assert run_invincat(["chat", "b", "--json", "--cwd", str(workspace)], other).code == 0
    servers = warm_servers(runtime)
    assert len(servers) == 2
    # A server of an Invincat from before `server status` existed.
    old_sock = runtime / "invincat" / f"chat-{'a' * 24}.sock"
    old = subprocess.Popen(
        [sys.executable, "-c", OLD_SERVER, str(old_sock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert old.stdout is not None and old.stdout.readline() == "listening\n"
        code, listed = status(warm_env)
        assert code == 0
        by_pid = {s["pid"]: s for s in listed}
        assert set(by_pid) == {*servers.values(), old.pid}
        assert sorted(s["current"] for s in listed) == [False, False, True]
        assert by_pid[old.pid]["answered"] is False
        assert by_pid[old.pid]["codeVersion"] == "a" * 24

        stopped = run_invincat(["server", "stop", "--json"], warm_env)
        assert stopped.code == 0, stopped.stderr
        assert {s["pid"] for s in json.loads(stopped.stdout)["stopped"]} == set(by_pid)
        assert old.wait(timeout=DEADLINE) == -15  # the older one got SIGTERM
        assert not any(alive(pid) for pid in servers.values())
        assert status(warm_env) == (1, [])
    finally:
        if old.poll() is None:
            old.kill()
        old.wait(timeout=DEADLINE)


ATTACKER = """
import json, socket, struct, sys
conn = socket.socket(socket.AF_UNIX)
conn.connect(sys.argv[1])
body = json.dumps({"control": sys.argv[2], "force": True}).encode()
try:  # the server may close before we even finish sending
    conn.sendall(struct.pack(">I", len(body)) + body)
    reply = conn.recv(65536)
except (BrokenPipeError, ConnectionResetError):
    reply = b""
print("REPLY=" + repr(reply))
"""


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
def test_another_user_can_neither_see_nor_stop_the_server(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], workspace: Path
) -> None:
    shared = Path(tempfile.mkdtemp(prefix="invincat-warm-"))
    try:
        os.chmod(shared, 0o755)
        env = {**warm_env, "XDG_RUNTIME_DIR": str(shared / "xdg")}
        fake_openai.add_steps([{"content": "warm"}])
        assert run_invincat(["chat", "hi", "--json", "--cwd", str(workspace)], env).code == 0
        [(sock, pid)] = warm_servers(shared / "xdg").items()
        for directory in (shared / "xdg", sock.parent):  # the permission mistake
            os.chmod(directory, 0o755)
        os.chmod(sock, 0o666)
        for request in ("status", "stop"):
            attack = subprocess.run(
                ["/usr/bin/python3", "-c", ATTACKER, str(sock), request],
                user=65534,
                capture_output=True,
                text=True,
                timeout=DEADLINE,
                check=False,
            )
            assert "REPLY=b''" in attack.stdout, attack.stderr  # closed, nothing said
        assert alive(pid) and sock.exists()
        assert warm_log(shared / "xdg", sock).count("refused a connection from uid 65534") == 2
    finally:
        stop_warm_servers(shared / "xdg")
        subprocess.run(["rm", "-rf", str(shared)], check=False)


def spawn(args: list[str], env: dict[str, str]) -> pexpect.spawn:
    return pexpect.spawn(INVINCAT, args, env=env, encoding="utf-8", timeout=DEADLINE)


def test_a_chat_at_a_terminal_says_it_started_the_server(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "first answer"}, {"content": "second answer"}])
    child = spawn(["chat", "one", "--cwd", str(workspace)], warm_env)
    child.expect(r"invincat: started the warm server \(pid (\d+); `invincat server status`")
    started = int(child.match.group(1))
    child.expect("INVINCAT_WARM=0 turns it off")
    child.expect("first answer")
    child.expect(pexpect.EOF)
    assert list(warm_servers(runtime).values()) == [started]
    child = spawn(["chat", "two", "--cwd", str(workspace)], warm_env)  # already running
    child.expect(pexpect.EOF)
    assert "second answer" in child.before and "started the warm server" not in child.before


def test_with_json_or_in_a_pipe_only_invincat_warm_1_says_it(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "a"}])
    child = spawn(["chat", "one", "--json", "--cwd", str(workspace)], warm_env)
    child.expect(pexpect.EOF)
    assert '"turn_end"' in child.before and "started the warm server" not in child.before
    run_invincat(["server", "stop"], warm_env)
    fake_openai.add_steps([{"content": "b"}])
    done = run_invincat(["chat", "two", "--cwd", str(workspace)], warm_env)  # a pipe
    assert done.code == 0 and "started" not in done.stderr
    run_invincat(["server", "stop"], warm_env)
    fake_openai.add_steps([{"content": "c"}])
    loud = {**warm_env, "INVINCAT_WARM": "1"}
    said = run_invincat(["chat", "three", "--cwd", str(workspace)], loud)
    assert said.code == 0
    [(_sock, pid)] = [item for item in warm_servers(runtime).items() if alive(item[1])]
    assert f"invincat: started the warm server (pid {pid};" in said.stderr


def ask_raw(sock: Path, body: bytes) -> bytes:
    """Send one framed message (any bytes) and return all the server answers."""
    conn = socket.socket(socket.AF_UNIX)
    conn.settimeout(DEADLINE)
    with conn:
        conn.connect(str(sock))
        try:
            conn.sendall(struct.pack(">I", len(body)) + body)
        except BrokenPipeError:
            return b""
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
        return reply


def test_malformed_control_and_work_requests_cost_only_themselves(
    fake_openai: FakeOpenAIServer, warm_env: dict[str, str], runtime: Path, workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "warm"}])
    assert run_invincat(["chat", "hi", "--json", "--cwd", str(workspace)], warm_env).code == 0
    [(sock, pid)] = warm_servers(runtime).items()
    bad = [
        {"control": "reboot"},
        {"control": None},
        {"control": 5},
        {"control": ["status"]},
        {"control": "stop\0"},
        {"control": "stop", "force": "yes"},  # not `true`: no force (sent below)
    ]
    for message in bad[:-1]:
        reply = ask_raw(sock, json.dumps(message).encode())
        assert b'"error": "unknown control request' in reply, (message, reply)
    assert ask_raw(sock, b"not json") == b""  # closed, nothing else
    assert ask_raw(sock, b'"a string"') == b""
    assert ask_raw(sock, b"\0" * 100) == b""
    # Work requests (descriptors missing) with argv/cwd of the wrong type, a NUL byte.
    for message in ({"argv": 5, "cwd": None}, {"argv": ["chat"], "cwd": "/tmp\0x"}):
        assert ask_raw(sock, json.dumps(message).encode()) == b""
    # ... and with the three descriptors: each costs its own worker only.
    for message in ({"argv": 5, "cwd": None}, {"argv": None, "cwd": 7}, {"cwd": "/x\0"}):
        body = json.dumps(message).encode()
        with open(os.devnull, "r+b") as null, socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(DEADLINE)
            conn.connect(str(sock))
            fd = null.fileno()
            socket.send_fds(conn, [struct.pack(">I", len(body)) + body], [fd, fd, fd])
            with contextlib.suppress(ConnectionResetError):
                while conn.recv(65536):  # until the worker (or the server) closes it
                    pass
        assert alive(pid), message
        assert status(warm_env)[1][0]["pid"] == pid  # and it still answers
    conn = socket.socket(socket.AF_UNIX)
    with conn:  # a huge announced size: refused before it is read
        conn.connect(str(sock))
        conn.sendall(struct.pack(">I", 2**31))
        assert conn.recv(10) == b""
    assert alive(pid)
    code, [server] = status(warm_env)
    assert code == 0 and server["pid"] == pid
    # A truthy non-boolean force is no force: with a worker running, stop still refuses.
    fake_openai.add_steps([write_step("f.txt"), {"content": "done"}])
    chat = LiveInvincat(["chat", "write", "--json", "--cwd", str(workspace)], warm_env)
    try:
        chat.wait_for("approval_requested")
        reply = ask_raw(sock, json.dumps(bad[-1]).encode())
        assert b'"stopped": false' in reply and alive(pid)
        chat.send("n\n\n")
        assert chat.finish() == 0
    finally:
        if chat.proc.poll() is None:
            chat.kill()
    assert not (workspace / "f.txt").exists()


def test_help_names_the_warm_server_and_its_command(invincat_env: dict[str, str]) -> None:
    shown = run_invincat(["--help"], invincat_env)
    assert shown.code == 0
    text = " ".join(shown.stdout.split())  # argparse wraps the epilog at the terminal width
    assert "per-user warm server" in text and "`invincat server status`" in text
    assert "INVINCAT_WARM=0 turns it off" in text
    server = run_invincat(["server", "--help"], invincat_env)
    assert server.code == 0 and "status" in server.stdout and "stop" in server.stdout
    stop = run_invincat(["server", "stop", "--help"], invincat_env)
    assert "--force" in stop.stdout
    alone = run_invincat(["server"], invincat_env)  # which one: a usage error naming them
    assert alone.code == 2 and "{status,stop}" in alone.stderr
    assert "server_command" not in alone.stderr
