"""The repeated-call guard's counting (runtime/agents/repeated_calls.py) and its setting."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from invincat_server.runtime.agents.repeated_calls import (
    RepeatedCallGuard,
    current_turn,
    repeats,
    short,
)
from invincat_server.runtime.config import ConfigError, load_settings
from invincat_server.runtime.errors import ModelOutputError

WRITE = ("write_file", {"path": "calc.py", "content": "print('Hello, world!')"})
TEST = ("execute", {"command": "python -m pytest test_calc.py", "timeout": 120})


class Thread:
    """A turn's messages built call by call, each answered with a result."""

    def __init__(self) -> None:
        self.messages: list[BaseMessage] = [HumanMessage("fix the failing test")]
        self.next_id = 0

    def answer(self, *calls: tuple[str, dict[str, Any]]) -> AIMessage:
        made = []
        for name, args in calls:
            self.next_id += 1
            made.append({"name": name, "args": args, "id": f"c{self.next_id}"})
        message = AIMessage("", tool_calls=made)
        self.messages.append(message)
        return message

    def result(self, message: AIMessage, text: str) -> None:
        for call in message.tool_calls:
            self.messages.append(ToolMessage(text, tool_call_id=call["id"], name=call["name"]))

    def step(self, *calls: tuple[str, dict[str, Any]], result: str = "ok") -> None:
        self.result(self.answer(*calls), result)


def counts(thread: Thread, *calls: tuple[str, dict[str, Any]]) -> list[int]:
    last = thread.answer(*calls)
    return [r.count for r in repeats(current_turn(thread.messages)[:-1], last)]


def guard(thread: Thread, limit: int = 3) -> dict[str, Any] | None:
    state: Any = {"messages": thread.messages}
    return asyncio.run(RepeatedCallGuard(limit).aafter_model(state, None))  # type: ignore[arg-type]


def test_identical_calls_are_counted_whatever_the_key_order() -> None:
    thread = Thread()
    thread.step(("read_file", {"path": "a.py", "limit": 10}))
    thread.step(("read_file", {"limit": 10, "path": "a.py"}))
    assert counts(thread, ("read_file", {"path": "a.py", "limit": 10})) == [3]
    assert counts(thread, ("read_file", {"path": "a.py", "limit": 20})) == [1]


def test_the_alternating_loop_of_the_bench_grows_and_new_work_restarts_the_count() -> None:
    loop = Thread()
    for _ in range(2):
        loop.step(WRITE)
        loop.step(TEST)
    # The first round was new work; from the second on nothing new happens.
    assert counts(loop, WRITE) == [2]
    loop.result(loop.messages[-1], "Wrote 1 line")  # type: ignore[arg-type]
    assert counts(loop, TEST) == [3]
    # Edit, test, another edit, the same test: work, never a loop.
    work = Thread()
    for attempt in range(5):
        work.step(("edit_file", {"path": "calc.py", "old": "a", "new": f"b{attempt}"}))
        work.step(TEST)
    assert counts(work, TEST) == [2]


def test_a_turn_starts_at_the_last_user_message() -> None:
    thread = Thread()
    for _ in range(3):
        thread.step(WRITE)
    thread.messages.append(AIMessage("Done."))
    thread.messages.append(HumanMessage("again please"))
    assert counts(thread, WRITE) == [1]


def test_the_limit_th_call_is_answered_with_the_last_result_and_nothing_else_is() -> None:
    thread = Thread()
    thread.step(WRITE, result="Wrote 1 line to calc.py (overwrote existing file).")
    thread.step(WRITE, result="Wrote 1 line to calc.py (overwrote existing file).")
    assert guard(thread) is None  # nothing answered before the third
    message = thread.answer(WRITE, ("read_file", {"path": "calc.py"}))
    update = guard(thread)
    assert update is not None
    [refused] = update["messages"]
    assert refused.tool_call_id == message.tool_calls[0]["id"] and refused.status == "error"
    assert "already made this exact call 2 times this turn" in refused.text
    assert "Wrote 1 line to calc.py" in refused.text and "read the file" in refused.text


def test_a_call_that_goes_on_repeating_ends_the_turn_naming_it() -> None:
    thread = Thread()
    for _ in range(4):
        thread.step(WRITE)
    thread.answer(WRITE)
    with pytest.raises(ModelOutputError, match=r"`write_file`.*calc\.py.* 5 times this turn"):
        guard(thread)


def test_a_call_already_answered_is_counted_but_not_answered_again() -> None:
    thread = Thread()
    thread.step(WRITE)
    thread.step(WRITE)
    message = thread.answer(WRITE)
    thread.result(message, "Error: arguments do not fit. Nothing ran.")
    assert guard(thread) is None


def test_the_last_result_is_the_last_real_one_and_kept_short() -> None:
    thread = Thread()
    long_output = "start of the run\n" + "x" * 5000 + "\n1 failed in 0.02s"
    thread.step(TEST, result=long_output)
    thread.step(TEST, result=long_output)
    thread.answer(TEST)
    update = guard(thread)
    assert update is not None
    thread.messages += update["messages"]
    thread.answer(TEST)  # the fourth: answered again, with the test's output, not the note
    update = guard(thread)
    assert update is not None
    [refused] = update["messages"]
    assert "3 times" in refused.text and "1 failed in 0.02s" in refused.text
    assert "start of the run" in refused.text and len(refused.text) < 1000
    assert len(short(long_output)) < 450


def test_max_repeated_calls_defaults_to_3_and_0_turns_it_off(tmp_path: Path) -> None:
    home = {"INVINCAT_HOME": str(tmp_path)}
    assert load_settings(home).max_repeated_calls == 3
    (tmp_path / "config.toml").write_text("max_repeated_calls = 0\n")
    assert load_settings(home).max_repeated_calls == 0
    assert load_settings({**home, "INVINCAT_MAX_REPEATED_CALLS": "5"}).max_repeated_calls == 5


@pytest.mark.parametrize("bad", ["1", "-1", "2.5", "many", "1001", "99999999999999999999"])
def test_a_bad_max_repeated_calls_is_a_one_line_error(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="max_repeated_calls") as info:
        load_settings({"INVINCAT_HOME": str(tmp_path), "INVINCAT_MAX_REPEATED_CALLS": bad})
    assert "\n" not in str(info.value)


def test_the_stopped_calls_description_is_redacted_before_it_is_cut() -> None:
    from invincat_server.runtime.agents.repeated_calls import describe_call

    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 3
    text = describe_call("write_file", {"path": "x" * 170, "content": key})
    assert "A1b2C3d4" not in text


def test_copies_of_one_call_in_one_answer_are_that_call_once() -> None:
    # Qwen2.5-Coder-1.5B wrote one answer of 32 calls, three calls over and over (bench
    # run 19): not a loop it was told about, and nothing to stop.
    thread = Thread()
    read = ("read_file", {"path": "cli.py"})
    message = thread.answer(*[WRITE, read, TEST] * 10)
    update = guard(thread)
    assert update is not None
    answered = {m.tool_call_id: m for m in update["messages"]}
    ids = [c["id"] for c in message.tool_calls]
    # The first of each runs; each copy is answered, naming the call it copies.
    assert set(answered) == set(ids[3:])
    copy = answered[ids[3]]
    assert copy.status == "error" and f"same call (id {ids[0]})" in copy.text
    # A later answer counts such a call as made once before, not ten times.
    again = Thread()
    again.step(*[WRITE] * 10)
    assert counts(again, WRITE) == [2]


def test_copies_in_an_answer_of_a_call_made_before_are_counted_once() -> None:
    thread = Thread()
    thread.step(WRITE, result="Wrote 1 line")
    thread.step(WRITE, result="Wrote 1 line")
    message = thread.answer(WRITE, WRITE, WRITE)
    update = guard(thread)  # the third time: refused, and its copies answered too
    assert update is not None
    answered = {m.tool_call_id: m.text for m in update["messages"]}
    first, *copies = [c["id"] for c in message.tool_calls]
    assert "already made this exact call 2 times" in answered[first]
    assert all("this answer already makes the same call" in answered[c] for c in copies)
