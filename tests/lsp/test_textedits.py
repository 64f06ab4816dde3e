"""The minimal edits sent with workspace/applyEdit, and the ranges diagnostics cover."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from invincat_server.lsp.protocol import ChatParams, ParamsError, parse_params
from invincat_server.lsp.textedits import LineIndex, diff_hunks, split_lines

CASES = {
    "one word": ("a\nb old c\nd\n", "a\nb new c\nd\n"),
    "two places": ("1\n2\n3\n4\n5\n6\n", "1\nTWO\n3\n4\nFIVE\n6\n"),
    "insert line": ("a\nc\n", "a\nb\nc\n"),
    "delete line": ("a\nb\nc\n", "a\nc\n"),
    "append at end": ("a\n", "a\nb"),
    "drop final newline": ("a\nb\n", "a\nb"),
    "from empty": ("", "hello\n"),
    "to empty": ("hello\n", ""),
    "crlf": ("a\r\nold\r\nc\r\n", "a\r\nnew\r\nc\r\n"),
    "crlf to lf": ("a\r\nb\r\n", "a\nb\n"),
    "lone cr": ("a\rb\rc", "a\rB\rc"),
    "astral": ("🐈 one\n🐈 two\n", "🐈 one\n🐈 2\n"),
}


def _apply(old: str, edits: list[types.TextEdit], encoding: str) -> str:
    """Apply edits the way a client does (pygls' document model), back to front."""
    doc = TextDocument("file:///x", source=old, position_codec=PositionCodec(encoding))
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
    for edit in reversed(ordered):
        change = types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)
        doc.apply_change(change)
    return doc.source


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize("case", CASES)
def test_the_edits_turn_the_old_text_into_the_new_one(case: str, encoding: str) -> None:
    old, new = CASES[case]
    units = PositionCodec(encoding).client_num_units
    edits = LineIndex(old, units).text_edits(diff_hunks(old, new))
    assert _apply(old, edits, encoding) == new


def test_the_edit_covers_only_what_changes() -> None:
    old, new = CASES["one word"]
    assert diff_hunks(old, new) == [(4, 7, "new")]
    [edit] = LineIndex(old, len).text_edits(diff_hunks(old, new))
    assert (edit.range.start, edit.range.end) == (
        types.Position(line=1, character=2),
        types.Position(line=1, character=5),
    )
    assert len(diff_hunks(*CASES["two places"])) == 2


def test_a_crlf_pair_is_never_split() -> None:
    old, new = CASES["crlf to lf"]
    for start, end, _text in diff_hunks(old, new):
        assert not (old[start - 1 : start + 1] == "\r\n" or old[end - 1 : end + 1] == "\r\n")


def test_lines_split_like_an_editor() -> None:
    assert split_lines("a\r\nb\rc\nd\u2028e") == ["a\r\n", "b\r", "c\n", "d\u2028e"]


def test_positions_count_in_the_client_encoding() -> None:
    text = "🐈é x"
    for encoding, expected in (("utf-8", 7), ("utf-16", 4), ("utf-32", 3)):
        index = LineIndex(text, PositionCodec(encoding).client_num_units)
        assert index.position(3).character == expected


def test_params_are_checked_strictly_with_every_problem_named() -> None:
    chat = parse_params(ChatParams, {"prompt": "hi", "threadId": None, "extra": 1}, "m")
    assert (chat.prompt, chat.thread_id, chat.wait, chat.mode) == ("hi", None, False, "agent")
    with pytest.raises(ParamsError) as caught:
        parse_params(ChatParams, {"wait": 1, "workDoneToken": True}, "invincat/chat")
    assert str(caught.value) == (
        "Invalid params for invincat/chat: `prompt` is required; `wait` must be true or "
        "false, got number; `workDoneToken` must be a number or a string, got boolean."
    )
