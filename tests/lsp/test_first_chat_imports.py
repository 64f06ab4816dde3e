"""A fresh language server's first chat (issue 15 item 2: spawn → first `message_delta`
≤ 2 s, measured in bench/bench_lsp.py) loads only what that chat needs, and loads the
agent stack without full garbage collections. Checked on the real server with Python's
import log (`PYTHONPROFILEIMPORTTIME=1`) and a watch on the collector (tests/gc_watch.py).
"""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.deadlines import DEADLINE
from tests.gc_watch import rescans_of_the_stack, watched
from tests.lsp.raw import Peer, initialize, initialized, request

_IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \| (\s*)(\S+)$")


def first_chat(env: dict[str, str], workspace: Path, stderr_file: Path) -> None:
    """Spawn the server, send a chat right after `initialized`, read until `turn_end`."""
    with stderr_file.open("w") as err:
        server = subprocess.Popen(
            watched("--stdio"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            cwd=workspace,
            env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        )
    assert server.stdin is not None and server.stdout is not None
    # A stuck server is killed, so a read ends (and the test fails) instead of hanging.
    watchdog = threading.Timer(DEADLINE, server.kill)
    watchdog.start()
    try:
        peer = Peer(server.stdout, server.stdin)
        peer.send(initialize(1, workspace))
        peer.answer(1)
        peer.send(initialized())
        peer.send(request(2, "invincat/chat", {"prompt": "first chat"}))
        assert peer.event("message_delta")["text"]
        assert peer.event("turn_end")["status"] == "completed"
    finally:
        watchdog.cancel()
        server.kill()
        server.wait()


def test_first_chat_loads_no_absent_extension_and_never_rescans_the_stack(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    fake_openai.add_steps([{"content": "Hello there."}])
    log = tmp_path / "server-stderr.txt"
    # The process of a first editor window, which imports the stack itself (later windows
    # are forked by the warm server with it imported: tests/lsp/test_warm_stdio.py).
    first_chat({**invincat_env, "INVINCAT_WARM": "0"}, workspace, log)
    stderr = log.read_text()
    modules = {m.group(2) for line in stderr.splitlines() if (m := _IMPORT_LINE.match(line))}
    packages = {name.split(".")[0] for name in modules}
    assert "langchain_openai" in packages, "no import log: PYTHONPROFILEIMPORTTIME was ignored"
    # No MCP server is configured: the MCP SDK and our client for it stay out.
    assert not packages & {"mcp", "mcp_types"}, sorted(packages & {"mcp", "mcp_types"})
    assert "invincat_server.runtime.extensions.mcp.client" not in modules
    # The terminal front end (prompt_toolkit, rich rendering) is the CLI's, not the editor's.
    assert "prompt_toolkit" not in packages
    assert not {m for m in modules if m.startswith("invincat_server.terminal")}
    # The stack was imported in bulk_import(): no full collection rescanned it.
    assert not rescans_of_the_stack(stderr), rescans_of_the_stack(stderr)
