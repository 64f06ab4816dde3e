"""The REPL served by a warm server's worker at a real terminal (docs/warm-server.md): the
worker's line editor works on the client's terminal."""

from __future__ import annotations

from pathlib import Path

from invincat_server.testing.fake_openai import FakeOpenAIServer
from invincat_server.testing.fixtures import warm_workers
from tests.terminal.pty_terminal import Terminal


def _user_prompts(fake_openai: FakeOpenAIServer) -> list[str]:
    return [r["messages"][-1]["content"] for r in fake_openai.chat_requests()]


def test_the_repl_runs_in_a_warm_worker_on_the_clients_terminal(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Warm answer."}])
    runtime = Path(invincat_env["XDG_RUNTIME_DIR"])
    before = set(warm_workers(runtime))
    term = Terminal(["chat", "--cwd", str(workspace)], {**invincat_env, "INVINCAT_WARM": "1"})
    try:
        term.expect("› ")
        term.child.setwinsize(30, 120)  # SIGWINCH reaches only the client; it is relayed
        term.line("hi")
        term.expect("Warm answer.")
        term.expect("› ")
        term.ctrl_d()
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    assert set(warm_workers(runtime)) - before, "no warm worker served the REPL"
    assert _user_prompts(fake_openai) == ["hi"]
