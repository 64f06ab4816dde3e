"""The interactive REPL in a real terminal (pty): history, paste, keys, Ctrl-C at every stage."""

from __future__ import annotations

import re
import time
from pathlib import Path

from invincat_server.runtime.agents.history_repair import INTERRUPTED_NOTE
from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.terminal.cli_process import process_running
from tests.terminal.pty_terminal import DEADLINE, Terminal

UP = "\x1b[A"


def _user_prompts(fake_openai: FakeOpenAIServer) -> list[str]:
    return [r["messages"][-1]["content"] for r in fake_openai.chat_requests()]


def test_up_recalls_the_previous_prompt_after_a_restart_and_history_stays_out_of_the_project(
    fake_openai: FakeOpenAIServer,
    invincat_env: dict[str, str],
    workspace: Path,
    invincat_home: Path,
) -> None:
    fake_openai.add_steps([{"content": "First answer."}, {"content": "Second answer."}])
    first = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        first.expect("› ")
        first.line("remember this prompt")
        first.expect("First answer.")
        first.expect("› ")
        first.ctrl_d()
        assert first.wait_exit() == 0
    finally:
        first.close()

    second = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        second.expect("› ")
        second.send(UP)  # the previous session's prompt comes back for editing
        second.expect("remember this prompt")
        second.send(" again\r")
        second.expect("Second answer.")
        second.expect("› ")
        second.ctrl_d()
        assert second.wait_exit() == 0
    finally:
        second.close()
    assert _user_prompts(fake_openai) == ["remember this prompt", "remember this prompt again"]
    [history] = list((invincat_home / "history").glob("*.txt"))
    assert history.stat().st_mode & 0o077 == 0  # prompts may hold secrets: owner only
    assert not [p for p in workspace.rglob("*") if "history" in p.name]


def test_a_pasted_three_line_text_is_one_prompt_and_esc_enter_adds_a_newline(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Got the traceback."}, {"content": "Got two lines."}])
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.paste("Traceback (most recent call last):\r  File x.py\rValueError: bad")
        term.send("\r")
        term.expect("Got the traceback.")
        term.expect("› ")
        term.send("line one\x1b\rline two\r")  # Esc-Enter (what Alt-Enter sends)
        term.expect("Got two lines.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert _user_prompts(fake_openai) == [
        "Traceback (most recent call last):\n  File x.py\nValueError: bad",
        "line one\nline two",
    ]


def test_ctrl_c_at_the_prompt_clears_the_input_then_says_how_to_leave_then_leaves(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Only this."}])
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.send("half a thought")
        term.expect("half a thought")
        term.ctrl_c()  # clears the typed text; nothing is sent
        term.line("the real question")
        term.expect("Only this.")
        term.expect("› ")
        term.ctrl_c()
        term.expect("Ctrl-C again or Ctrl-D to leave")
        term.expect("› ")
        term.ctrl_c()
        code = term.wait_exit()
    finally:
        term.close()
    assert code == 0, term.screen
    assert _user_prompts(fake_openai) == ["the real question"]


def test_ctrl_c_while_the_model_streams_cancels_the_turn_and_the_next_prompt_works(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"content": "Streaming slowly " + "word " * 200, "chunk_size": 5, "chunk_delay": 0.2},
            {"match": {"last_user_contains": "after"}, "content": "Fresh answer."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("talk slowly")
        term.expect("Streaming")
        term.expect("working · ")  # the live status line under the streamed text
        term.expect("Ctrl-C cancels")
        term.ctrl_c()  # cooked mode while the turn runs: the tty sends SIGINT
        term.expect("(turn cancelled)")
        term.expect("› ")
        term.line("after the cancel")
        term.expect("Fresh answer.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()


def test_ctrl_c_while_an_approved_command_runs_kills_it_and_the_next_prompt_works(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    marker = "sleep 30.125"
    fake_openai.add_steps(
        [
            {"content": "Warming up."},
            {"tool_calls": [{"name": "execute", "arguments": {"command": marker}}]},
            {"match": {"last_user_contains": "still"}, "content": "Still here."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        # One full prompt first: prompt_toolkit has run (and ended) once before the turn,
        # which is when it used to drop the asyncio SIGINT handler.
        term.expect("› ")
        term.line("hello")
        term.expect("Warming up.")
        term.expect("› ")
        term.line("run the long command")
        term.expect("[y] approve")
        term.expect("> ")
        term.send("y")  # one keystroke answers the menu
        deadline = time.monotonic() + DEADLINE
        while not process_running(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process_running(marker), term.screen
        term.ctrl_c()
        term.expect("(turn cancelled)")
        term.expect("› ")
        deadline = time.monotonic() + DEADLINE
        while process_running(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not process_running(marker), "the command outlived the cancelled turn"
        term.line("are you still there?")
        term.expect("Still here.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    messages = fake_openai.chat_requests()[-1]["messages"]
    assert [m["content"] for m in messages if m["role"] == "tool"] == [INTERRUPTED_NOTE]


def test_tab_completes_slash_commands_and_workspace_files(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "parser_main.py").write_text("x = 1\n")
    fake_openai.add_steps([{"content": "Looked."}])
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.send("/he\t")
        term.expect("/help")
        term.send("\r")
        term.expect("/plan PROMPT")  # the help text: the completed command ran
        term.expect("› ")
        term.send("look at @src/pars\t")
        term.expect("@src/parser_main.py")
        term.send("\r")
        term.expect("Looked.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    # The completed mention is sent as typed, and the file it names is attached.
    [sent] = _user_prompts(fake_openai)
    assert sent.startswith("look at @src/parser_main.py")
    assert "<editor_context>" in sent and "x = 1" in sent


def test_tool_output_is_collapsed_and_expand_shows_all_of_it(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": "seq 101 140"}}]},
            {"content": "Counted."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("count")
        term.expect("[y] approve")
        term.expect("> ")
        term.send("y")
        shown = term.expect("Counted.")
        # The live area showed the last lines while it ran (`│ 140`) under the status line
        # naming the call (``Running `seq 101 140` ``); printed for good is only the
        # collapsed result line.
        assert "Running `seq 101 140` · " in shown, term.screen
        printed = re.sub(r"│ \d+|Running `seq 101 140`", "", shown)
        assert "101" in printed and "/expand 1)" in printed and "140" not in printed, term.screen
        term.expect("› ")
        term.line("/expand")
        term.expect("140")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()


def test_markdown_is_rendered_in_colour_and_left_plain_with_no_color(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Use **bold** here."}, {"content": "Use **bold** here."}])
    for env, expected in (({}, "Use bold here."), ({"NO_COLOR": "1"}, "Use **bold** here.")):
        term = Terminal(["chat", "--cwd", str(workspace)], {**invincat_env, **env})
        try:
            term.expect("› ")
            term.line("say it")
            term.expect(expected)
            term.expect("› ")
            term.ctrl_d()
            assert term.wait_exit() == 0
        finally:
            term.close()
        if env:
            assert "\x1b[1m" not in term.raw  # no bold: NO_COLOR keeps the plain renderer


def test_a_long_diff_is_cut_at_the_approval_and_d_shows_all_before_deciding(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    content = "".join(f"row {i}\n" for i in range(1, 121))
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "big.txt", "content": content}}
                ]
            },
            {"content": "Wrote it."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("write big")
        shown = term.expect("[d] show the whole diff")
        assert "row 1\n" in shown and "more lines (+120 -0 in all)" in shown
        assert "row 120" not in shown
        term.expect("> ")
        term.send("d")
        term.expect("row 120")
        term.expect("> ")
        assert not (workspace / "big.txt").exists()
        term.send("y")
        term.expect("Wrote it.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert (workspace / "big.txt").read_text() == content


def test_a_memory_notice_while_typing_lands_above_the_prompt_not_in_the_typed_line(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    memory_model = "memory-model"
    operation = {
        "op": "create",
        "scope": "project",
        "section": "Testing",
        "content": "Run the tests with pytest -q",
        "confidence": "high",
        "score": 85,
        "score_reason": "the user asked to remember it",
    }
    fake_openai.add_steps(
        [
            {"match": {"model": "fake-model"}, "content": "Noted."},
            {
                "match": {"model": memory_model},
                "tool_calls": [
                    {
                        "name": "submit_memory_operations",
                        "arguments": {"operations": [operation]},
                    }
                ],
                "delay": 4.0,  # the answer is shown and the user is typing when it lands
            },
            {"match": {"model": "fake-model"}, "content": "Sure."},
            {
                "match": {"model": memory_model},
                "tool_calls": [
                    {"name": "submit_memory_operations", "arguments": {"operations": []}}
                ],
            },
        ]
    )
    env = {
        **invincat_env,
        "INVINCAT_MEMORY_EXTRACTION": "on",
        "INVINCAT_MEMORY_MODEL": memory_model,
    }
    term = Terminal(["chat", "--cwd", str(workspace)], env)
    try:
        term.expect("› ")
        term.line("remember we use pytest with -q")
        term.expect("Noted.")
        term.expect("› ")
        term.send("half typed")
        term.expect("half typed")
        term.expect("memory updated")
        term.send(" question\r")
        term.expect("Sure.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    # Between the typed text and the notice, the prompt line was erased (`ESC [ J`): the
    # notice is printed on a clean line above the prompt, which is then drawn again.
    raw = term.raw
    notice_at = raw.index("memory: ")
    assert "\x1b[J" in raw[raw.rindex("half typed", 0, notice_at) : notice_at], raw
    main = [r for r in fake_openai.chat_requests() if r.get("model") == "fake-model"]
    assert main[-1]["messages"][-1]["content"] == "half typed question"


def test_a_one_shot_run_in_a_terminal_keeps_the_plain_output(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps([{"content": "Use **bold** here."}])
    term = Terminal(["chat", "say it", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("Use **bold** here.")
        assert term.wait_exit() == 0
    finally:
        term.close()
    # The answer's bytes are plain (no Markdown rendering, no colour): scripts read it as
    # is. Escape sequences come only from the status line on stderr, erased before the
    # answer (tests/terminal/test_one_shot_status.py).
    assert term.raw.endswith("Use **bold** here.\r\n"), repr(term.raw)


def test_the_status_line_says_when_and_why_the_model_request_is_retried(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"fault": "http_500", "times": 2, "delay": 1.0},
            {"content": "Answered at last."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("hello")
        term.expect("retry 1 of 2 (HTTP 500")  # shown while it waits, not only in the final error
        term.expect("Answered at last.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()


def test_a_write_approved_by_a_session_rule_still_shows_what_changed(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "conf.txt").write_text("mode = slow\nlevel = 1\n")
    fake_openai.add_steps(
        [
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "notes.txt", "content": "first\n"},
                    }
                ]
            },
            {"content": "Wrote notes."},
            {
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {"path": "conf.txt", "content": "mode = fast\nlevel = 1\n"},
                    }
                ]
            },
            {"content": "Changed the mode."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("write notes")
        term.expect("[s] ")
        term.expect("> ")
        term.send("s")  # allow writes for the rest of the session
        term.expect("Wrote notes.")
        term.expect("› ")
        term.line("make it fast")
        shown = term.expect("Changed the mode.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    assert "Approval needed" not in shown  # nobody was asked ...
    assert "conf.txt (+1 -1):" in shown  # ... yet the change is shown
    assert "-mode = slow" in shown and "+mode = fast" in shown, shown
    assert (workspace / "conf.txt").read_text() == "mode = fast\nlevel = 1\n"


def test_a_running_commands_output_shows_live_before_it_ends(
    fake_openai: FakeOpenAIServer, invincat_env: dict[str, str], workspace: Path
) -> None:
    # Arithmetic so the printed lines differ from the command text shown in the call line.
    # The command waits for a file the test creates only once the first line is on screen.
    command = (
        'echo "first-$((6*7))"; while [ ! -e gate ]; do sleep 0.1; done; echo "second-$((6*8))"'
    )
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": command}}]},
            {"content": "Command finished."},
        ]
    )
    term = Terminal(["chat", "--cwd", str(workspace)], invincat_env)
    try:
        term.expect("› ")
        term.line("run it")
        term.expect("[y] approve")
        term.expect("> ")
        term.send("y")
        term.expect("│ first-42")  # live, while the command still waits for the gate
        assert "second-48" not in term.screen
        (workspace / "gate").touch()
        term.expect("second-48")
        term.expect("Command finished.")
        term.expect("› ")
        term.ctrl_d()
        assert term.wait_exit() == 0
    finally:
        term.close()
    [tool_message] = [
        m["content"] for m in fake_openai.chat_requests()[-1]["messages"] if m["role"] == "tool"
    ]
    assert tool_message == "first-42\nsecond-48\n[exit code: 0]"
