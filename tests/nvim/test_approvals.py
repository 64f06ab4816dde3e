"""Approvals in Neovim: an approval never takes focus or reads keys when it arrives (typing
in Insert mode as it arrives answers nothing); it is decided in the approval view
(`:Invincat approvals`), with `:Invincat approve` on its chat line, or with the code actions
on a proposed edit of an open, modified buffer (shown as a native diff and diagnostics)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import RunNvim

DISK = "disk line one\ndisk line two\n"
# A multi-byte prefix: a wrong position encoding would put the edit in the wrong place.
BUFFER = ["buffer line one", "🐈 café: buffer line two"]
EDITED = ["buffer line one", "🐈 café: edited line two"]


def _edit_steps(then: dict[str, Any]) -> list[dict[str, Any]]:
    edit = {"path": "notes.txt", "old_string": "buffer line two", "new_string": "edited line two"}
    return [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": edit}]},
        then,
    ]


def test_accepting_the_code_action_edits_the_buffer_and_one_undo_restores_it(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text(DISK)
    fake_openai.add_steps(_edit_steps({"content": "Edited."}))
    result = nvim("edit_accept", buffer=BUFFER)

    # The agent read the unsaved buffer, not the disk.
    read = next(m for m in fake_openai.chat_requests()[1]["messages"] if m["role"] == "tool")
    assert "buffer line one" in read["content"] and "disk line" not in read["content"]
    # Nothing opened or asked when it arrived; the approval view showed it with its diff
    # and keys; the diff tab (`D`) showed current vs proposed, in diff mode.
    assert result["arrived"] == {"same_window": True, "tabs": 1}
    assert [p for p in result["prompts"] if p["kind"] == "select"] == []
    assert "  ⚠ Edit file notes.txt" in result["view"]
    assert "    +🐈 café: edited line two" in result["view"]
    assert any("d preview in the file · D side-by-side diff" in line for line in result["view"])
    current, proposed = result["diff_windows"]
    assert current["is_file_buffer"] and current["diff"] and proposed["diff"]
    assert proposed["name"].startswith("invincat://proposed/notes.txt")
    assert proposed["lines"] == EDITED
    # The diagnostic marks exactly the replaced word (byte columns in Neovim).
    prefix = len("🐈 café: ".encode())
    assert result["diagnostic"] == {
        "lnum": 1,
        "col": prefix,
        "end_col": prefix + len("buffer"),
        "source": "invincat",
    }
    assert result["offered"] == ["Invincat: accept proposed edit", "Invincat: reject proposed edit"]

    assert result["after"] == EDITED
    assert result["modified"] is True  # the buffer changed; the file on disk did not
    assert (workspace / "notes.txt").read_text() == DISK
    assert result["undone"] == BUFFER
    assert result["tabs_after"] == 1  # the diff tab closed once the approval was decided
    assert result["diagnostics_after"] == 0
    assert "Edit file notes.txt — approved" in result["chat"]
    assert "✓ edit_file: Edited notes.txt" in result["chat"]


def test_rejecting_from_the_prompt_leaves_the_buffer_unchanged(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text(DISK)
    fake_openai.add_steps(_edit_steps({"content": "Leaving it."}))
    result = nvim("edit_reject", buffer=BUFFER)

    assert result["in_view"]
    assert result["after"] == BUFFER
    assert (workspace / "notes.txt").read_text() == DISK
    assert result["tabs"] == 1 and result["diagnostics"] == 0
    assert "Edit file notes.txt — rejected" in result["chat"]
    told = fake_openai.chat_requests()[-1]["messages"][-1]
    assert told["role"] == "tool" and "keep line two as it is" in told["content"]


def test_invincat_approve_decides_the_approval_under_the_cursor(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    write = {"path": "hello.txt", "content": "hello\n"}
    fake_openai.add_steps(
        [{"tool_calls": [{"name": "write_file", "arguments": write}]}, {"content": "Wrote it."}]
    )
    result = nvim("approve_at_cursor")

    assert (workspace / "hello.txt").read_text() == "hello\n"  # not open: written to disk
    assert result["tabs_while_pending"] == 1 and result["prompts"] == []
    assert result["hint"] == "  ← :Invincat approvals"
    assert result["status_while_pending"] == "waiting for approval"
    assert result["status_after"] == ""
    assert "Write file hello.txt — approved" in result["chat"]
    assert "✓ write_file" in result["chat"] and "Wrote it." in result["chat"]


def test_an_approval_left_pending_is_offered_after_a_restart_and_resumes_the_turn(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    write = {"path": "hello.txt", "content": "hello\n"}
    fake_openai.add_steps(
        [{"tool_calls": [{"name": "write_file", "arguments": write}]}, {"content": "Resumed."}]
    )
    nvim("restart_leave_pending")
    assert not (workspace / "hello.txt").exists()

    result = nvim("restart_resume")
    warned = [n["message"] for n in result["notifications"]]
    assert "Invincat: 1 approval pending from an earlier session: :Invincat approvals" in warned
    assert "── 1 approval pending from an earlier session ──" in result["chat"]
    assert "Write file hello.txt — approved" in result["chat"]
    assert "Resumed." in result["chat"]
    assert (workspace / "hello.txt").read_text() == "hello\n"


def test_a_question_from_the_agent_is_answered_from_its_options(
    nvim: RunNvim, fake_openai: FakeOpenAIServer
) -> None:
    question = {"question": "Which file should I greet in?", "options": ["a.txt", "b.txt"]}
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "ask_user", "arguments": {"questions": [question]}}]},
            {"content": "Greeting in b.txt."},
        ]
    )
    result = nvim("question")

    assert "    ? Which file should I greet in?" in result["view"]
    assert "      • b.txt" in result["view"]
    [asked] = [p for p in result["prompts"] if p["prompt"] == question["question"]]
    assert asked["items"] == ["a.txt", "b.txt", "Something else…"]
    answer = fake_openai.chat_requests()[-1]["messages"][-1]
    assert answer["role"] == "tool" and "b.txt" in answer["content"]
    assert "? Which file should I greet in? — answered" in result["chat"]


def test_typing_in_insert_mode_as_an_approval_arrives_never_answers_it(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    write = {"path": "hello.txt", "content": "hello\n"}
    fake_openai.add_steps(
        [
            # The approval arrives a while after the prompt, when the user is typing.
            {"tool_calls": [{"name": "write_file", "arguments": write}], "delay": 2},
            {"content": "Wrote it."},
        ]
    )
    result = nvim("typing_during_approval")

    typing = result["while_typing"]
    assert "1\n1\n1\n" in typing["typed"]  # lines that answered "1: Approve" before the fix
    assert typing["written"] is False
    assert typing["pending"] == 1
    assert "Write file hello.txt — pending" in typing["chat"]
    # Every typed key is in the user's buffer; the mode, window and tab did not change.
    assert typing["lines"] == typing["typed"].split("\n")
    assert typing["mode"] == "i" and typing["same_window"] and typing["tabs"] == 1
    # Announced once the typing paused (not over it), still in Insert mode.
    assert typing["announced"] == 0
    assert result["announced_in_mode"] == "i"
    [note] = [n["message"] for n in result["notifications"] if "approval" in n["message"]]
    assert note == "Invincat: Write file hello.txt waiting: :Invincat approvals"

    # Decided only by the explicit action: the view shows it, its diff and its keys.
    view = result["view"]
    assert "  ⚠ Write file hello.txt" in view and "    +hello" in view
    assert any(line.strip().startswith("a approve · A approve always… · r reject") for line in view)
    assert (workspace / "hello.txt").read_text() == "hello\n"
    assert "Write file hello.txt — approved" in result["chat"]
    after = result["after"]
    assert after["same_window"] and after["mode"] == "n" and after["tabs"] == 1
    assert after["lines"] == typing["lines"]


def test_typing_on_the_command_line_as_an_approval_arrives_keeps_every_key(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    write = {"path": "hello.txt", "content": "hello\n"}
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "write_file", "arguments": write}], "delay": 2},
            {"content": "Not writing it."},
        ]
    )
    result = nvim("cmdline_during_approval")

    cmdline = result["on_cmdline"]
    assert cmdline["mode"] == "c" and cmdline["cmdline"] == cmdline["typed"]
    assert cmdline["typed"].startswith("1111")
    assert cmdline["same_window"] and cmdline["tabs"] == 1
    assert cmdline["pending"] == 1 and cmdline["written"] is False
    assert cmdline["announced"] == 0  # not over the command line, even during a pause

    # Rejected in the approval view, the reason typed at Neovim's own input() prompt.
    assert not (workspace / "hello.txt").exists()
    assert "Write file hello.txt — rejected" in result["chat"]
    told = fake_openai.chat_requests()[-1]["messages"][-1]
    assert told["role"] == "tool" and "not now" in told["content"]
    assert result["after"]["mode"] == "n" and result["after"]["tabs"] == 1


def test_the_inline_preview_is_accepted_with_ga_and_focus_stays_on_the_file(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text(DISK)
    fake_openai.add_steps(_edit_steps({"content": "Edited."}))
    result = nvim("inline_preview", buffer=BUFFER)

    # `d` in the approval view (typed keys): the edit shown in the file's own window, in
    # the same tab — the replaced line highlighted, the new one as a virtual line below it,
    # and the keys in a header line.
    shown = result["previewed"]
    assert shown["in_file_window"] and shown["tabs"] == 1 and not shown["view_open"]
    assert shown["cursor_line"] == 2
    assert shown["preview"]["removed"] == [2]
    assert shown["preview"]["added"] == [EDITED[1]]
    assert "Edit file notes.txt" in shown["preview"]["header"]
    assert "ga accept · gR reject · q close" in shown["preview"]["header"]
    assert shown["lines"] == BUFFER  # a preview changes nothing

    # `ga`: accepted, the buffer changed (not the file), focus still on the file window,
    # the preview gone and the keys it shadowed restored.
    after = result["after"]
    assert after["lines"] == EDITED
    assert (workspace / "notes.txt").read_text() == DISK
    assert after["in_file_window"] and after["mode"] == "n" and after["tabs"] == 1
    assert after["preview"] == {"added": [], "removed": []}  # no header either
    assert after["ga_mapping"] == "the user's ga"  # the buffer's own mapping, put back
    assert "Edit file notes.txt — approved" in result["chat"]


def test_d_and_D_on_a_command_approval_warn_and_leave_it_pending(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    fake_openai.add_steps(
        [
            {"tool_calls": [{"name": "execute", "arguments": {"command": "touch ran.txt"}}]},
            {"content": "Not run."},
        ]
    )
    result = nvim("no_diff_keys")

    assert result["after_keys"] == {"tabs": 1, "pending": 1, "filetype": "invincat-approvals"}
    assert [w for w in result["warnings"] if "no file diff" in w] == [
        "Invincat: this approval has no file diff"
    ] * 2
    assert "rejected" in result["chat"]
    assert not (workspace / "ran.txt").exists()


def test_gra_anywhere_on_a_changed_line_offers_accept_and_reject(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text(DISK)
    fake_openai.add_steps(_edit_steps({"content": "Edited."}))
    result = nvim("gra_on_changed_line", buffer=BUFFER)

    # The cursor was at column 0, before the changed word the diagnostic marks.
    assert result["diagnostic_col"] > 0
    [menu] = [p for p in result["prompts"] if p["kind"] == "select"]
    assert menu["items"][:2] == [
        "Invincat: accept proposed edit",
        "Invincat: reject proposed edit",
    ], menu
    assert result["lines"] == EDITED
    assert "Edit file notes.txt — approved" in result["chat"]


def test_gra_in_the_preview_is_a_code_action_and_typed_ahead_keys_never_reject(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text(DISK)
    fake_openai.add_steps(_edit_steps({"content": "Left it."}))
    result = nvim("preview_keys", buffer=BUFFER)

    assert "ga accept · gR reject · q close" in result["header"]
    # `gra`: Neovim's code actions (dismissed), no reject prompt, nothing decided.
    assert result["after_gra"] == {"mode": "n", "pending": 1}
    # `gR` then "a<CR>" at once: the prompt is open and empty, the edit still pending.
    assert result["prompt"] == {"text": "", "pending": 1}
    assert result["after_esc"] == {"pending": 1, "previewed": True}
    # Rejected only by the reason typed into the open prompt.
    assert result["lines"] == BUFFER
    assert "Edit file notes.txt — rejected" in result["chat"]
    assert "not this way" in json.dumps(fake_openai.chat_requests()[-1]["messages"])


def test_the_approval_view_counts_approvals_in_words(
    nvim: RunNvim, fake_openai: FakeOpenAIServer, workspace: Path
) -> None:
    writes = [
        {"name": "write_file", "arguments": {"path": name, "content": "hi\n"}}
        for name in ("a.txt", "b.txt")
    ]
    fake_openai.add_steps([{"tool_calls": writes}, {"content": "Wrote both."}])
    result = nvim("two_approvals")

    assert result["two"] == " 2 approvals waiting for your decision"
    assert result["one"] == " 1 approval waiting for your decision"
    assert (workspace / "a.txt").read_text() == "hi\n" == (workspace / "b.txt").read_text()
