"""The REPL's /threads marks the thread this session is on with `*`, and /thread without
an id says how to use it (not "Unknown thread ''"), at a real terminal."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from invincat_server.runtime.records import Records
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.pty_terminal import Terminal


async def _save_old_thread(db: Path, workspace: Path) -> None:
    records = await Records.open(db)
    try:
        await records.touch_thread("t_earlier", "an earlier question", str(workspace))
    finally:
        await records.close()


def test_threads_marks_the_current_thread_and_thread_alone_shows_its_usage(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    invincat_home: Path,
    workspace: Path,
) -> None:
    asyncio.run(_save_old_thread(invincat_home / "threads.sqlite", workspace))
    fake_openai.add_steps([{"content": "Hello there."}])
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("/threads")
        listed_new = term.expect("(this session is on a new thread")
        term.expect("› ")
        term.line("hi")
        term.expect("Hello there.")
        term.expect("› ")
        term.line("/threads")
        term.expect("an earlier question")
        term.expect("› ")
        listed = term.screen[term.screen.rfind("› /threads") :]
        term.line("/thread")
        term.expect("Usage: /thread ID")
        term.expect("› ")
        term.line("/thread t_nope")
        term.expect("Unknown thread 't_nope'")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    # Before the first turn nothing is marked (the new thread is not saved yet).
    assert "  t_earlier  " in listed_new and "* " not in listed_new, listed_new
    rows = [line.strip() for line in listed.splitlines() if "  20" in line]
    current = [row for row in rows if row.startswith("* ")]
    assert len(current) == 1 and current[0].endswith("hi"), rows
    assert re.match(r"\* t_\w+  ", current[0])
    assert any(row.startswith("t_earlier") for row in rows), rows
    assert "Unknown thread ''" not in term.screen
