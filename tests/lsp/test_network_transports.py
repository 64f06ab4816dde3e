"""`invincat --tcp` and `--socket` let in only the user's editor (issue 13 §2), and stop
cleanly on SIGINT / SIGTERM / `exit` (§7). The real `invincat` process, raw sockets."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.lsp.raw import DEADLINE, Peer, initialize, initialized, request

INVINCAT = str(Path(sys.executable).with_name("invincat"))


class Server:
    """A running `invincat` language server whose stderr goes to a file."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path, log: Path) -> None:
        self.log = log
        with log.open("wb") as stderr:
            self.process = subprocess.Popen(
                [INVINCAT, *args], env=env, cwd=cwd, stderr=stderr, stdin=subprocess.DEVNULL
            )

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for_log(self, pattern: str) -> re.Match[str]:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            if match := re.search(pattern, self.stderr()):
                return match
            assert self.process.poll() is None, f"the server exited:\n{self.stderr()}"
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not logged within {DEADLINE}s:\n{self.stderr()}")

    def wait(self) -> int:
        return self.process.wait(timeout=DEADLINE)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.kill()


def start(servers: list[Server], args: list[str], env: dict[str, str], cwd: Path) -> Server:
    server = Server(args, env, cwd, cwd.parent / f"server-{len(servers)}.log")
    servers.append(server)
    return server


def start_tcp(servers: list[Server], env: dict[str, str], cwd: Path) -> tuple[Server, int]:
    server = start(servers, ["--tcp", "--port", "0"], env, cwd)
    port = int(server.wait_for_log(r"listening on 127\.0\.0\.1:(\d+)").group(1))
    return server, port


def info_file(env: dict[str, str], server: Server) -> Path:
    return Path(env["INVINCAT_HOME"]) / "run" / f"lsp-{server.process.pid}.json"


def read_info(env: dict[str, str], server: Server) -> dict[str, Any]:
    return json.loads(info_file(env, server).read_text())


def assert_cut_off(peer: Peer) -> None:
    """The server closed the connection without sending a single message."""
    assert peer.receive() is None


def open_editor(address: Any, workspace: Path, options: Any) -> tuple[Peer, socket.socket]:
    peer, sock = Peer.connect(address)
    peer.send(initialize(1, workspace, options))
    answer = peer.answer(1)
    assert "capabilities" in answer["result"], answer
    peer.send(initialized())
    return peer, sock


def stop_editor(peer: Peer, server: Server) -> None:
    peer.send(request(99, "shutdown"))
    peer.answer(99)
    peer.send({"jsonrpc": "2.0", "method": "exit"})
    assert server.wait() == 0
    assert "Traceback" not in server.stderr(), server.stderr()


ATTACKS = {
    "no token": {"processId": None},
    "wrong token": {"token": "guessed-" + "x" * 40},
    "token of the wrong type": {"token": ["a"]},
}


@pytest.mark.parametrize("attack", [*ATTACKS, "chat before initialize"])
def test_a_client_without_the_token_is_cut_off_and_nothing_runs(
    attack: str,
    servers: list[Server],
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
    tmp_path: Path,
) -> None:
    """Another local process connects first, picks its own workspace, chats and approves
    its own `execute`: the connection is closed unanswered and nothing happens."""
    victim = tmp_path / "victim"
    (victim / ".git").mkdir(parents=True)
    pwned = victim / "pwned.txt"
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": f"touch {pwned}"}}]},
            {"content": "done"},
        ]
    )
    server, port = start_tcp(servers, invincat_env, workspace)
    token = read_info(invincat_env, server)["token"]

    # A silent connection opened before the editor must not keep the editor out.
    _, silent_sock = Peer.connect(("127.0.0.1", port))

    attacker, _ = Peer.connect(("127.0.0.1", port))
    if attack == "chat before initialize":
        attacker.send(request(1, "invincat/chat", {"prompt": "run it"}))
        attacker.send(initialize(2, victim, {"token": token}))
    else:
        attacker.send(initialize(1, victim, ATTACKS[attack]))
    # The whole attack, in case the server plays along (it did before the fix).
    first = attacker.receive()
    if first is not None:
        attacker.send(initialized())
        attacker.send(request(3, "invincat/chat", {"prompt": "run it"}))
        asked = attacker.event("approval_requested")
        attacker.send(
            request(
                4,
                "invincat/resolveApproval",
                {"approvalId": asked["approval_id"], "decision": "approve"},
            )
        )
        attacker.event("turn_end")
    assert not pwned.exists()
    assert fake_openai.requests == []
    assert first is None, f"the server answered a client without the token: {first}"
    assert_cut_off(attacker)
    assert not (invincat_home / "threads.sqlite").exists()  # no session was opened
    server.wait_for_log(r"Refused a connection from 127\.0\.0\.1:\d+: ")

    # The user's editor gets in with the token, in its own workspace.
    editor, _ = open_editor(("127.0.0.1", port), workspace, {"token": token})
    editor.send(request(6, "invincat/chat", {"prompt": "run it"}))
    asked = editor.event("approval_requested")
    assert asked["tool_name"] == "execute"
    assert not pwned.exists()  # the user decides; here they don't

    # While the editor is connected, even a client with the token is refused.
    second, _ = Peer.connect(("127.0.0.1", port))
    second.send(initialize(1, workspace, {"token": token}))
    assert_cut_off(second)

    silent_sock.close()
    stop_editor(editor, server)
    assert token not in server.stderr()
    assert not pwned.exists()


def test_the_connection_info_file_is_private_and_removed_at_exit(
    servers: list[Server],
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
) -> None:
    server, port = start_tcp(servers, invincat_env, workspace)
    path = info_file(invincat_env, server)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    info = read_info(invincat_env, server)
    assert info["host"] == "127.0.0.1" and info["port"] == port
    assert info["pid"] == server.process.pid and len(info["token"]) >= 32

    fake_openai.add_steps([{"content": "over tcp"}])
    editor, _ = open_editor(("127.0.0.1", port), workspace, {"token": info["token"]})
    editor.send(request(2, "invincat/chat", {"prompt": "hi", "wait": True}))
    assert editor.answer(2)["result"]["status"] == "completed"
    stop_editor(editor, server)
    assert not path.exists()


def test_a_new_home_made_for_the_token_file_is_private_under_umask_022(
    servers: list[Server], invincat_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """Issue 23 item 3: `Path.mkdir(parents=True)` gave a new $INVINCAT_HOME the umask's
    0755, so every local user could list it (and read what later landed there)."""
    home = tmp_path / "new" / "home"
    env = {**invincat_env, "INVINCAT_HOME": str(home)}
    old = os.umask(0o022)  # inherited by the server
    try:
        server, _ = start_tcp(servers, env, workspace)
    finally:
        os.umask(old)
    assert stat.S_IMODE(info_file(env, server).stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "run").stat().st_mode) == 0o700


def test_a_token_file_and_a_token_chosen_by_the_launcher(
    servers: list[Server],
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
) -> None:
    chosen = "launcher-chose-this-token-0123456789"
    path = tmp_path / "conn" / "lsp.json"
    env = {**invincat_env, "INVINCAT_LSP_TOKEN": chosen}
    server = start(servers, ["--tcp", "--port", "0", "--token-file", str(path)], env, workspace)
    port = int(server.wait_for_log(r"listening on 127\.0\.0\.1:(\d+)").group(1))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["token"] == chosen
    # Commands the agent runs (here approved by the user) do not inherit the token.
    dump = workspace / "env.txt"
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": f"env > {dump}"}}]},
            {"content": "done"},
        ]
    )
    editor, _ = open_editor(("127.0.0.1", port), workspace, {"token": chosen})
    editor.send(request(2, "invincat/chat", {"prompt": "dump the environment"}))
    asked = editor.event("approval_requested")
    editor.send(
        request(
            3,
            "invincat/resolveApproval",
            {"approvalId": asked["approval_id"], "decision": "approve"},
        )
    )
    assert editor.event("turn_end")["status"] == "completed"
    assert "INVINCAT_HOME" in dump.read_text()  # the command ran, with the environment
    assert chosen not in dump.read_text()
    stop_editor(editor, server)
    assert not path.exists()

    weak = start(
        servers, ["--tcp", "--port", "0"], {**env, "INVINCAT_LSP_TOKEN": "1234"}, workspace
    )
    assert weak.wait() != 0
    assert "INVINCAT_LSP_TOKEN is 4 characters" in weak.stderr()


def test_a_non_loopback_host_needs_allow_remote_and_warns(
    servers: list[Server], invincat_env: dict[str, str], workspace: Path
) -> None:
    refused = start(servers, ["--tcp", "--port", "0", "--host", "0.0.0.0"], invincat_env, workspace)
    assert refused.wait() == 2
    assert "--host 0.0.0.0 is reachable from other machines" in refused.stderr()
    assert "listening" not in refused.stderr()

    allowed = start(
        servers,
        ["--tcp", "--port", "0", "--host", "0.0.0.0", "--allow-remote"],
        invincat_env,
        workspace,
    )
    allowed.wait_for_log(r"listening on 0\.0\.0\.0:\d+")
    assert "warning: serving on 0.0.0.0 (--allow-remote)" in allowed.stderr()
    allowed.process.send_signal(signal.SIGTERM)
    assert allowed.wait() == 0


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    # AF_UNIX paths are limited to ~100 bytes: pytest's tmp_path can be longer.
    with tempfile.TemporaryDirectory(prefix="inv-") as path:
        yield Path(path)


def test_the_unix_socket_is_private_and_serves_the_protocol(
    servers: list[Server],
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    socket_dir: Path,
) -> None:
    path = socket_dir / "lsp.sock"
    # A socket left by a killed server is replaced.
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    server = start(servers, ["--socket", str(path)], invincat_env, workspace)
    server.wait_for_log(re.escape(f"listening on {path}"))
    assert stat.S_ISSOCK(path.stat().st_mode)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    fake_openai.add_steps([{"content": "over a socket"}])
    editor, _ = open_editor(str(path), workspace, None)
    editor.send(request(2, "invincat/chat", {"prompt": "hi", "wait": True}))
    assert editor.answer(2)["result"]["status"] == "completed"

    # A second client (the kernel let it in: same user) is refused while the editor works.
    second, _ = Peer.connect(str(path))
    second.send(initialize(1, workspace))
    assert_cut_off(second)

    stop_editor(editor, server)
    assert not os.path.lexists(path)


def test_a_socket_path_that_is_not_a_stale_socket_is_not_replaced(
    servers: list[Server], invincat_env: dict[str, str], workspace: Path, socket_dir: Path
) -> None:
    path = socket_dir / "notes.txt"
    path.write_text("mine\n")
    server = start(servers, ["--socket", str(path)], invincat_env, workspace)
    assert server.wait() == 1
    assert "exists and is not a socket; refusing to replace it" in server.stderr()
    assert path.read_text() == "mine\n"

    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(str(socket_dir / "live.sock"))
    live.listen()
    try:
        server = start(
            servers, ["--socket", str(socket_dir / "live.sock")], invincat_env, workspace
        )
        assert server.wait() == 1
        assert "Another server is listening" in server.stderr()
        assert stat.S_ISSOCK(os.lstat(socket_dir / "live.sock").st_mode)  # left alone
    finally:
        live.close()


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "exit"])
def test_stopping_the_tcp_server_is_clean(
    how: str,
    servers: list[Server],
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
) -> None:
    """With an editor connected and the session open: exit 0, no traceback."""
    server, port = start_tcp(servers, invincat_env, workspace)
    token = read_info(invincat_env, server)["token"]
    editor, _ = open_editor(("127.0.0.1", port), workspace, {"token": token})
    editor.send(request(2, "invincat/threads/list", {}))  # waits for the session to open
    assert editor.answer(2)["result"]["threads"] == []
    if how == "exit":
        # shutdown and exit back to back, as Neovim does on :qa
        editor.send(request(3, "shutdown"))
        editor.send({"jsonrpc": "2.0", "method": "exit"})
    else:
        server.process.send_signal(getattr(signal, how))
    assert server.wait() == 0
    assert "Traceback" not in server.stderr(), server.stderr()
    assert not info_file(invincat_env, server).exists()


NVIM = Path(sys.executable).with_name("nvim")


@pytest.mark.parametrize("transport", ["tcp", "socket"])
def test_neovim_connects_as_docs_editors_md_says(
    transport: str,
    servers: list[Server],
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    socket_dir: Path,
    tmp_path: Path,
) -> None:
    """A real Neovim, without the plugin, with `vim.lsp.rpc.connect` and `init_options`."""
    if not NVIM.exists():
        pytest.fail(f"{NVIM} is missing: install the dev extras (pip install -e '.[dev]').")
    fake_openai.add_steps([{"content": "hello from tcp"}])
    env = {**invincat_env, "ROOT": str(workspace), "RESULT": str(tmp_path / "result.json")}
    env["XDG_STATE_HOME"] = env["XDG_DATA_HOME"] = env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    if transport == "tcp":
        server, _ = start_tcp(servers, invincat_env, workspace)
        env["INFO"] = str(info_file(invincat_env, server))
    else:
        path = socket_dir / "lsp.sock"
        server = start(servers, ["--socket", str(path)], invincat_env, workspace)
        server.wait_for_log(re.escape(f"listening on {path}"))
        env["SOCKET"] = str(path)
    script = Path(__file__).with_name("lua") / "connect_tcp.lua"
    nvim = subprocess.run(
        [str(NVIM), "--headless", "--clean", "-i", "NONE", "-c", f"luafile {script}"],
        env=env,
        cwd=workspace,
        capture_output=True,
        timeout=DEADLINE + 30,
    )
    result = json.loads((tmp_path / "result.json").read_text())
    assert result.get("err") is None, (result, nvim.stderr[-2000:], server.stderr())
    assert result["result"]["status"] == "completed"
    assert server.wait() == 0  # Neovim detached: the one-editor server is done
    assert "Refused" not in server.stderr()
