"""runtime/remote/runs.py reading what a deployment answers, and graph.py's workspace: one
thread or interrupt of an unknown shape (a wrong type, a missing field, a NUL byte, a huge
value) costs that thread only, and a call is shown as its redacted title, never its
arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from invincat_server.runtime.remote.graph import WORKSPACE_ENV, server_workspace
from invincat_server.runtime.remote.runs import RemoteRuns, interrupt_calls

REQUEST = {
    "tool_name": "write_file",
    "tool_call_id": "call_1",
    "approval_id": "ap_1",
    "args": {"path": "notes.txt", "content": "sk-live-0123456789abcdefghijklmnopqrstuv"},
}


def _interrupt(*requests: Any, kind: Any = "tool_approval") -> dict[str, Any]:
    return {"kind": kind, "batch_id": "ap_1", "requests": list(requests)}


def _thread(thread_id: Any = "t1", interrupts: Any = None, graph: Any = "invincat") -> Any:
    value = interrupts if interrupts is not None else {"task": [{"value": _interrupt(REQUEST)}]}
    return {"thread_id": thread_id, "metadata": {"graph_id": graph}, "interrupts": value}


def test_a_well_formed_interrupt_is_read_as_titles() -> None:
    parsed = interrupt_calls(_interrupt(REQUEST))
    assert parsed is not None
    kind, [call] = parsed
    assert kind == "tool_approval"
    assert (call.tool_name, call.summary, call.tool_call_id) == (
        "write_file",
        "Write notes.txt",
        "call_1",
    )


def test_a_secret_in_a_command_is_redacted_in_its_title() -> None:
    command = {
        **REQUEST,
        "tool_name": "execute",
        "args": {
            "command": "curl -H 'Authorization: Bearer ghp_0123456789abcdefghijABCDEFGHIJ012345' x"
        },
    }
    parsed = interrupt_calls(_interrupt(command))
    assert parsed is not None
    assert "ghp_0123456789" not in parsed[1][0].summary


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "approve",
        [],
        {"requests": [REQUEST]},  # no kind
        _interrupt(),  # no requests
        _interrupt(REQUEST, kind=42),
        _interrupt(REQUEST, kind="x" * 100),
        _interrupt({**REQUEST, "tool_call_id": None}),
        _interrupt({**REQUEST, "approval_id": 7}),
        _interrupt({**REQUEST, "tool_call_id": "a\x00b"}),
        _interrupt({**REQUEST, "tool_call_id": "x" * 10_000}),
        _interrupt(REQUEST, "not a request"),  # one bad request: the whole batch is unknown
    ],
)
def test_an_interrupt_of_another_shape_is_unknown(bad: Any) -> None:
    assert interrupt_calls(bad) is None


def test_odd_arguments_still_give_a_title() -> None:
    for args in (None, "rm -rf /", [1], {"path": 42}, {"path": "a\x00b"}, {"path": "y" * 100_000}):
        parsed = interrupt_calls(_interrupt({**REQUEST, "args": args}))
        assert parsed is not None
        summary = parsed[1][0].summary
        assert "\x00" not in summary and len(summary) < 300


@pytest.mark.parametrize(
    "thread",
    [
        None,
        "t1",
        [],
        _thread(thread_id=None),
        _thread(thread_id=42),
        _thread(thread_id="a\x00b"),
        _thread(thread_id="x" * 5000),
        _thread(interrupts={"task": [{"value": "nope"}]}),
        _thread(interrupts={"task": "nope"}),
        _thread(interrupts={"task": [None]}),
    ],
)
def test_a_thread_of_another_shape_is_skipped(thread: Any) -> None:
    assert RemoteRuns._pending_thread("lab", "invincat", thread) is None


def test_threads_of_another_graph_and_without_interrupts_wait_for_nothing() -> None:
    other = RemoteRuns._pending_thread("lab", "invincat", _thread(graph="echo"))
    assert other is not None and other.calls == ()
    idle = RemoteRuns._pending_thread("lab", "invincat", _thread(interrupts=[]))
    assert idle is not None and idle.calls == ()
    ours = RemoteRuns._pending_thread("lab", "invincat", _thread())
    assert ours is not None and [c.summary for c in ours.calls] == ["Write notes.txt"]
    assert "sk-live" not in str(ours.to_json())


def test_the_server_workspace_is_the_configured_folder_else_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert server_workspace({WORKSPACE_ENV: str(tmp_path)}) == tmp_path.resolve()
    monkeypatch.chdir(tmp_path)
    assert server_workspace({}) == tmp_path.resolve()
    with pytest.raises(NotADirectoryError, match=WORKSPACE_ENV):
        server_workspace({WORKSPACE_ENV: str(tmp_path / "missing")})
