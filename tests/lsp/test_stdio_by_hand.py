"""`invincat --stdio` typed by hand at a shell (stdin a terminal, which an editor never
gives it): it says on stderr that it is the language server for editors and how to chat,
then serves as usual; started by an editor (pipes) it says nothing."""

from __future__ import annotations

import json
import subprocess
import tty
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import private_runtime_dir
from tests.deadlines import DEADLINE
from tests.terminal.cli_process import INVINCAT, run_invincat


@pytest.fixture
def warm_env(invincat_env: dict[str, str]) -> Iterator[dict[str, str]]:
    """The default (warm) environment, with a runtime directory of its own."""
    with private_runtime_dir() as runtime:
        env = {**invincat_env, "XDG_RUNTIME_DIR": str(runtime)}
        env.pop("INVINCAT_WARM", None)
        yield env


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}


@pytest.mark.parametrize("warm", ["cold", "starts a server", "served by a worker"])
def test_stdio_typed_at_a_terminal_says_what_it_is_and_still_serves(
    warm: str, warm_env: dict[str, str], workspace: Path, fake_openai: FakeOpenAIServer
) -> None:
    env = {**warm_env, "INVINCAT_WARM": "0"} if warm == "cold" else warm_env
    if warm == "served by a worker":  # a one-shot chat leaves a warm server running
        fake_openai.add_steps([{"content": "warm"}])
        assert run_invincat(["chat", "hi", "--json", "--cwd", str(workspace)], env).code == 0
    child = pexpect.spawn(INVINCAT, ["--stdio"], env=env, cwd=str(workspace), timeout=DEADLINE)
    try:
        child.expect("this is the language server for editors")
        child.expect("To chat here, run `invincat chat`")
        assert child.isalive()
        # An editor would speak LSP: it still answers (raw mode: the bytes as they are).
        tty.setraw(child.child_fd)
        body = json.dumps(INITIALIZE).encode()
        child.send(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        child.expect(rb'"capabilities": ?\{')
        # Said once, by the process the user started (not again by a worker).
        assert b"language server for editors" not in child.before
        child.sendcontrol("c")
    finally:
        child.close(force=True)


def test_stdio_from_an_editor_says_nothing_on_stderr(warm_env: dict[str, str]) -> None:
    env = {**warm_env, "INVINCAT_WARM": "0"}
    done = subprocess.run(
        [INVINCAT, "--stdio"], env=env, input=b"", capture_output=True, timeout=DEADLINE
    )
    assert done.stderr == b""
