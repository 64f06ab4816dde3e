"""LiveOutput: whole, filtered lines, coalesced in time; run_command feeds it as it reads."""

from __future__ import annotations

import asyncio
from pathlib import Path

from invincat_server.runtime.agents.memory_guard import WITHHELD, withhold_line
from invincat_server.runtime.tools.shell import LIVE_MAX_LINE, LiveOutput, run_command


async def test_only_whole_lines_go_out_and_the_last_at_close() -> None:
    sent: list[str] = []
    live = LiveOutput(sent.append, interval=0)
    live.feed("one\ntw")
    live.feed("o\nthr")
    assert sent == ["one\n", "two\n"]
    live.close()
    assert sent == ["one\n", "two\n", "thr"]


async def test_lines_within_the_interval_are_coalesced_and_sent_by_a_timer() -> None:
    sent: list[str] = []
    live = LiveOutput(sent.append, interval=0.2)
    live.feed("a\n")  # first chunk: at once
    live.feed("b\n")
    live.feed("c\n")
    assert sent == ["a\n"]
    deadline = asyncio.get_running_loop().time() + 60
    while len(sent) < 2 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    assert sent == ["a\n", "b\nc\n"]  # without more output: the timer sent them together
    live.close()
    assert sent == ["a\n", "b\nc\n"]


async def test_a_secret_split_across_reads_is_still_withheld() -> None:
    secret = "the memory line SECRET-1234567"
    sent: list[str] = []
    live = LiveOutput(sent.append, lambda line: withhold_line(line, [secret]), interval=0)
    live.feed("ok\nthe memory line SEC")
    live.feed("RET-1234567 and more\nbye")
    live.close()
    shown = "".join(sent)
    assert "SECRET" not in shown
    assert shown == f"ok\n{WITHHELD}\nbye"


async def test_an_over_long_unfinished_line_is_not_shown_live() -> None:
    sent: list[str] = []
    live = LiveOutput(sent.append, interval=0)
    live.feed("x" * (LIVE_MAX_LINE + 1))
    live.feed("yyy\nnext\n")
    live.close()
    assert sent == ["next\n"]


async def test_run_command_sends_the_first_line_before_the_command_ends(tmp_path: Path) -> None:
    got_first = asyncio.Event()
    sent: list[str] = []

    def emit(text: str) -> None:
        sent.append(text)
        if "first" in text:
            got_first.set()

    live = LiveOutput(emit)
    # The command waits for a file the test creates only once it has seen "first".
    gate = tmp_path / "gate"
    command = f"echo first; while [ ! -e {gate} ]; do sleep 0.05; done; echo second"
    task = asyncio.create_task(run_command(command, tmp_path, 120, 10_000, on_output=live))
    await asyncio.wait_for(got_first.wait(), 60)
    assert not task.done()
    gate.touch()
    result = await asyncio.wait_for(task, 60)
    assert result.exit_code == 0
    assert "".join(sent) == "first\nsecond\n"
