"""What the colour terminal view shows, checked on rich's recorded consoles (pure rendering)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from invincat_server.runtime.events import (
    ApprovalRequested,
    MessageDelta,
    Todos,
    ToolCall,
    ToolOutput,
    ToolResult,
    TurnEnd,
    TurnStart,
)
from invincat_server.terminal.rich_render import (
    DIFF_HEAD_LINES,
    LIVE_OUTPUT_LINES,
    RichRenderer,
    approx_tokens,
)


def _renderer(root: Path | None = None) -> tuple[RichRenderer, Console, Console]:
    out = Console(record=True, width=100, force_terminal=True, color_system="truecolor")
    err = Console(record=True, width=100, force_terminal=True, color_system="truecolor")
    out.file = io.StringIO()
    err.file = io.StringIO()
    renderer = RichRenderer(root=root, console=out, err_console=err, live=False)
    return renderer, out, err


def _turn(renderer: RichRenderer, *events: object) -> None:
    renderer.event(TurnStart(thread_id="t", turn_id="u"))
    for event in events:
        renderer.event(event)  # type: ignore[arg-type]
    renderer.event(TurnEnd(status="completed", thread_id="t", turn_id="u"))


def test_the_answer_is_markdown_with_highlighted_code() -> None:
    renderer, out, _ = _renderer()
    answer = "# Fix\n\nUse **this**:\n\n```python\ndef f():\n    return 1\n```\n"
    _turn(renderer, MessageDelta(text=answer[:10]), MessageDelta(text=answer[10:]))
    text = out.export_text(clear=False)
    assert "# Fix" not in text and "Fix" in text  # a heading, not raw Markdown
    assert "**this**" not in text and "this" in text
    assert "```" not in text and "def f():" in text
    [code_line] = [x for x in out.export_text(styles=True).splitlines() if "mdef\x1b" in x]
    # Highlighted: the keyword and the function name in colours of their own.
    keyword, name = code_line.split("mdef\x1b")[0], code_line.split("mf\x1b")[0]
    assert keyword.rsplit("\x1b[", 1)[1] != name.rsplit("\x1b[", 1)[1]


def test_long_tool_output_is_one_line_and_expand_shows_all_of_it() -> None:
    renderer, out, _ = _renderer()
    content = "\n".join(f"line {i}" for i in range(1, 51))
    _turn(
        renderer,
        ToolCall(id="c1", name="execute", args={"command": "seq 50"}),
        ToolResult(id="c1", name="execute", status="success", content=content),
    )
    shown = out.export_text()
    assert "line 1 (+49 lines, /expand 1)" in shown
    assert "line 50" not in shown
    renderer.expand(None)
    assert "line 50" in out.export_text()


def test_a_long_approval_diff_is_cut_with_a_summary_and_coloured() -> None:
    renderer, out, _ = _renderer()
    diff = "--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,300 @@\n" + "".join(
        f"+row {i}\n" for i in range(300)
    )
    request = ApprovalRequested(
        approval_id="a1",
        thread_id="t",
        tool_call_id="c1",
        tool_name="write_file",
        description="Write file big.txt",
        diff=diff,
    )
    renderer.approval(request)
    text = out.export_text(clear=False)
    assert "Approval needed: Write file big.txt" in text
    assert "row 0" in text and "row 299" not in text
    assert f"… {303 - DIFF_HEAD_LINES} more lines (+300 -0 in all)" in text
    assert renderer.diff_collapsed(request)
    ansi = out.export_text(styles=True)
    assert "\x1b[32m    +row 0" in ansi  # added lines in green
    renderer.full_diff(request)
    assert "row 299" in out.export_text()


def test_a_write_approved_by_a_rule_still_shows_a_short_diff(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a = 1\nb = 2\n")
    renderer, out, _ = _renderer(root=tmp_path)
    renderer.event(TurnStart(thread_id="t", turn_id="u"))
    renderer.event(
        ToolCall(id="c1", name="write_file", args={"path": "app.py", "content": "a = 1\nb = 3\n"})
    )
    (tmp_path / "app.py").write_text("a = 1\nb = 3\n")  # the tool ran (no one was asked)
    renderer.event(ToolResult(id="c1", name="write_file", status="success", content="ok"))
    renderer.event(TurnEnd(status="completed", thread_id="t", turn_id="u"))
    text = out.export_text()
    assert "app.py (+1 -1):" in text
    assert "-b = 2" in text and "+b = 3" in text


def test_a_write_a_person_approved_does_not_repeat_its_diff(tmp_path: Path) -> None:
    renderer, out, _ = _renderer(root=tmp_path)
    renderer.event(ToolCall(id="c1", name="write_file", args={"path": "n.txt", "content": "x\n"}))
    renderer.approval(
        ApprovalRequested(
            approval_id="a1",
            thread_id="t",
            tool_call_id="c1",
            tool_name="write_file",
            description="Write file n.txt",
            diff="--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n",
        )
    )
    renderer.event(ToolResult(id="c1", name="write_file", status="success", content="ok"))
    assert "n.txt (+1 -0):" not in out.export_text()


def test_a_cancelled_turn_says_so_on_stderr() -> None:
    renderer, _, err = _renderer()
    renderer.event(TurnStart(thread_id="t", turn_id="u"))
    renderer.event(TurnEnd(status="cancelled", thread_id="t", turn_id="u"))
    assert "(turn cancelled)" in err.export_text()


def test_todos_are_a_checklist() -> None:
    renderer, out, _ = _renderer()
    items = [
        {"content": "Read the parser", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Add a test", "status": "pending"},
    ]
    _turn(renderer, Todos(items=items))
    text = out.export_text()
    assert "☑ Read the parser" in text and "◐ Fix the bug" in text and "☐ Add a test" in text


def _live_text(renderer: RichRenderer) -> str:
    console = Console(record=True, width=100, file=io.StringIO())
    console.print(renderer.live_view())
    return console.export_text()


def test_a_running_command_shows_its_last_lines_until_its_result() -> None:
    renderer, out, _ = _renderer()
    renderer.event(TurnStart(thread_id="t", turn_id="u"))
    renderer.event(ToolCall(id="c1", name="execute", args={"command": "make"}))
    lines = [f"step {i}" for i in range(1, 9)]
    renderer.event(ToolOutput(id="c1", text="\n".join(lines[:3]) + "\n"))
    renderer.event(ToolOutput(id="c1", text="\n".join(lines[3:]) + "\n\x1b[31mred\x1b[0m\n"))
    live = _live_text(renderer)
    shown = [x for x in [*lines, "red"] if f"│ {x}\n" in live]
    assert shown == [*lines, "red"][-LIVE_OUTPUT_LINES:], live  # the last lines only
    assert "\x1b" not in live  # the command's escape codes are not replayed
    # Under the status line, which says what runs in the phrase book's words.
    assert live.index("Running `make` · ") < live.index("│ red")
    renderer.event(ToolResult(id="c1", name="execute", status="success", content="x"))
    after = _live_text(renderer)
    assert "│" not in after and "working · " in after  # gone once the result is in
    renderer.event(TurnEnd(status="completed", thread_id="t", turn_id="u"))
    assert "step" not in out.export_text()  # live lines are never printed for good


def test_the_status_line_counts_output_tokens_of_the_turn() -> None:
    renderer, _, _ = _renderer()
    renderer.event(TurnStart(thread_id="t", turn_id="u"))
    assert "tokens out" not in _live_text(renderer)
    renderer.event(MessageDelta(text="a" * 400))
    renderer.event(MessageDelta(text="b" * 401))
    assert f"~{approx_tokens(801)} tokens out" in _live_text(renderer)
    assert approx_tokens(801) == 201
    renderer.event(TurnStart(thread_id="t", turn_id="v"))
    assert "tokens out" not in _live_text(renderer)  # counted per turn
